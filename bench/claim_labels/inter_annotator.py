"""Agreement of two independent labellings of the same encounters (GUIDE.md labels).

    .venv/bin/python bench/claim_labels/inter_annotator.py [FIRST_DIR SECOND_DIR ...]

Default pairs: ``labels/`` vs ``second/`` here, and the shared development labels vs their
``second-annotator/``. Per encounter and pooled: units compared, raw agreement, Cohen's κ on
supported vs not (the judge's decision), κ on the three labels, and agreement on severity where
both call the unit an error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sklearn.metrics import cohen_kappa_score

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[2] / "shared" / "data" / "aci-bench" / "claim-labels"


def read(path: Path) -> dict[tuple[str, int], dict]:
    rows = [json.loads(line) for line in path.open() if line.strip()]
    return {(r["system"], r["unit"]): r for r in rows}


def compare(pairs: list[tuple[str, dict, dict]]) -> dict:
    a_bin, b_bin, a_lab, b_lab, sev = [], [], [], [], []
    for _, a, b in pairs:
        for key in sorted(set(a) & set(b)):
            x, y = a[key], b[key]
            a_lab.append(x["label"])
            b_lab.append(y["label"])
            a_bin.append(x["label"] != "supported")
            b_bin.append(y["label"] != "supported")
            if a_bin[-1] and b_bin[-1]:
                sev.append(x["severity"] == y["severity"])
    n = len(a_bin)
    return {
        "units": n,
        "agreement": sum(x == y for x, y in zip(a_bin, b_bin, strict=False)) / n if n else None,
        "kappa_binary": cohen_kappa_score(a_bin, b_bin) if n else None,
        "kappa_3": cohen_kappa_score(a_lab, b_lab) if n else None,
        "errors_first": sum(a_bin),
        "errors_second": sum(b_bin),
        "severity_agreement": sum(sev) / len(sev) if sev else None,
    }


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
