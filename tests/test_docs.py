"""Every "SPEC §N" the package, its tests and benchmarks cite names a section of
``docs/SPEC.md`` (the specification kept in the repository)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CITE = re.compile(r"SPEC §(\d+)")
SECTION = re.compile(r"^## (\d+)\. ", re.M)


def test_every_spec_section_cited_exists():
    sections = set(SECTION.findall((ROOT / "docs" / "SPEC.md").read_text(encoding="utf-8")))
    assert {"1", "5", "9"} <= sections
    files = [*ROOT.glob("clinjudge/**/*.py"), *ROOT.glob("tests/*.py"), *ROOT.glob("bench/*.py")]
    files += [ROOT / "README.md"]
    cited = {
        (str(f.relative_to(ROOT)), n)
        for f in files
        for n in CITE.findall(f.read_text(encoding="utf-8"))
    }
    assert cited, "no SPEC citation found: the pattern is wrong"
    assert sorted(c for c in cited if c[1] not in sections) == []
