"""Speed of the text layer on all 87 ACI-Bench dialogues and notes (train + valid).

Usage: ``python bench/bench_text.py [DATA_DIR]`` (default ``../shared/data`` next to the repo).
Prints sentences/second for transcript parsing + sentence splitting, for negation and context
cues (cache cleared, every sentence analysed once), and notes/second for sectioning + claim
splitting.
"""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path

from clinjudge.text import negation
from clinjudge.text.claims import split_claims
from clinjudge.text.quantities import extract_quantities
from clinjudge.text.sections import segment_note
from clinjudge.text.transcript import parse_transcript, transcript_sentences


def _rows(data: Path) -> list[dict[str, str]]:
    rows = []
    for split in ("train", "valid"):
        with open(data / "aci-bench" / "challenge_data" / f"{split}.csv", newline="") as f:
            rows.extend(csv.DictReader(f))
    return rows


def main() -> None:
    default = Path(__file__).resolve().parents[2] / "shared" / "data"
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    rows = _rows(data)

    t0 = time.perf_counter()
    sentences = [
        s.text for r in rows for s in transcript_sentences(parse_transcript(r["dialogue"]))
    ]
    t_split = time.perf_counter() - t0
    n = len(sentences)
    print(f"dialogues: {len(rows)}  sentences: {n}")
    print(f"parse_transcript + split_sentences: {n / t_split:,.0f} sentences/s ({t_split:.2f} s)")

    negation._analyse.cache_clear()
    t0 = time.perf_counter()
    for s in sentences:
        negation.negated_spans(s)
        negation.history_or_hypothetical(s, 0, 1)
    t_neg = time.perf_counter() - t0
    print(f"negation + context cues: {n / t_neg:,.0f} sentences/s ({t_neg / n * 1e6:.0f} µs each)")

    t0 = time.perf_counter()
    n_q = sum(len(extract_quantities(s)) for s in sentences)
    t_q = time.perf_counter() - t0
    print(f"extract_quantities: {n / t_q:,.0f} sentences/s ({n_q} quantities)")

    t0 = time.perf_counter()
    n_claims = sum(len(split_claims(segment_note(r["note"]))) for r in rows)
    t_claims = time.perf_counter() - t0
    print(f"segment_note + split_claims: {len(rows) / t_claims:,.0f} notes/s ({n_claims} claims)")


if __name__ == "__main__":
    main()
