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
    files += [ROOT / "README.md", *ROOT.glob("docs/**/*.md")]
    cited = {
        (str(f.relative_to(ROOT)), n)
        for f in files
        for n in CITE.findall(f.read_text(encoding="utf-8"))
    }
    assert cited, "no SPEC citation found: the pattern is wrong"
    assert sorted(c for c in cited if c[1] not in sections) == []


def test_the_guide_builds_and_the_readme_names_only_files_that_exist(tmp_path):
    """``docs/`` builds with MkDocs in strict mode (a broken link or a page left out of the
    navigation fails), and every ``docs/…`` path the README names is there."""
    import subprocess
    import sys

    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "guide" / "judging" / "index.html").is_file()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(docs/[\w./-]+)`", readme))
    assert named and sorted(p for p in named if not (ROOT / p).exists()) == []
    assert len(readme.splitlines()) <= 300
