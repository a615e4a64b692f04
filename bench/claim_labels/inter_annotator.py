"""Agreement of two independent labellings of the same encounters (GUIDE.md labels).

    .venv/bin/python bench/claim_labels/inter_annotator.py [FIRST_DIR SECOND_DIR ...]

Default pairs: ``labels/`` vs ``second/`` here, and the shared development labels vs their
``second-annotator/``. Per encounter and pooled: units compared, raw agreement, Cohen's κ on
supported vs not (the judge's decision), κ on the three labels, and agreement on severity where
both call the unit an error — computed by the code of ``clinjudge agreement``
(:mod:`clinjudge.metrics.reviewer_agreement`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from clinjudge.agreement.labels import labelled_unit
from clinjudge.metrics.reviewer_agreement import reviewer_agreement

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[2] / "shared" / "data" / "aci-bench" / "claim-labels"


def read(path: Path) -> dict[tuple[str, int], dict]:
    rows = [json.loads(line) for line in path.open() if line.strip()]
    return {(r["system"], r["unit"]): r for r in rows}


def compare(pairs: list[tuple[str, dict, dict]]) -> dict:
    """:func:`clinjudge.metrics.reviewer_agreement.reviewer_agreement` on the units both label
    (the formulas of ``clinjudge agreement``; no intervals here)."""
    units = []
    for _, a, b in pairs:
        for key in sorted(set(a) & set(b)):
            x, y = a[key], b[key]
            where = {"encounter": x["encounter"], "system": x["system"], "unit": x["unit"]}
            span = {**where, "start": 0, "end": 0}
            units.append((labelled_unit(span, x), labelled_unit(span, y)))
    return reviewer_agreement(units, resamples=0)


def main() -> None:
    args = [Path(a) for a in sys.argv[1:]]
    dirs = list(zip(args[::2], args[1::2], strict=False)) or [
        (HERE / "labels", HERE / "second"),
        (SHARED / "labels", SHARED / "second-annotator"),
    ]
    everything = []
    for first, second in dirs:
        for path in sorted(second.glob("*.jsonl")):
            if (first / path.name).exists():
                pair = (path.stem, read(first / path.name), read(path))
                everything.append(pair)
                s = compare([pair])
                print(
                    f"{path.stem}: {s['units']} units, agreement {s['agreement']:.1%}, "
                    f"κ {s['kappa_binary']:.2f} (3-label {s['kappa_3']:.2f}), errors "
                    f"{s['errors_first']} vs {s['errors_second']}, severity agrees "
                    f"{s['severity_agreement'] or 0:.0%}"
                )
    s = compare(everything)
    print(
        f"pooled ({len(everything)} encounters): {s['units']} units, agreement "
        f"{s['agreement']:.1%}, κ {s['kappa_binary']:.2f} (3-label {s['kappa_3']:.2f}), "
        f"severity agrees {s['severity_agreement']:.0%}"
    )


if __name__ == "__main__":
    main()
