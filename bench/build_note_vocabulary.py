"""Build the documentation vocabulary: how often a note word is absent from its own dialogue.

A note paraphrases its visit in words the visit never uses — "presents", "history",
"regimen", "compliant", "follow-up" — and a fabricated fact brings words of its own. For every
content word (normalised stem) of the notes of a corpus of dialogue → note pairs, this counts the
notes that use it and the notes that use it although their dialogue never does. The ratio is the
word's *documentation rate*: near 1 for documentation wording, low for words that carry facts.

Corpora (none of them the ACI-Bench test3 notes the judges are scored on): ACI-Bench train and
valid (87 full visit notes) and MTS-Dialog training (1,201 dialogue / section-note pairs), all
CC BY 4.0. Writes ``clinjudge/judges/data/note_vocabulary.tsv`` (stem, notes, note-only notes) for
stems used by at least ``--min-notes`` notes.

    .venv/bin/python bench/build_note_vocabulary.py [--min-notes 5]
"""

from __future__ import annotations

import argparse
import csv
from collections import Counter
from pathlib import Path

from clinjudge.text.normalize import content_tokens

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data"
OUT = HERE.parent / "clinjudge" / "judges" / "data" / "note_vocabulary.tsv"


def pairs() -> list[tuple[str, str]]:
    out = []
    for name in ("train.csv", "valid.csv"):
        with (DATA / "aci-bench" / "challenge_data" / name).open() as f:
            out += [(r["dialogue"], r["note"]) for r in csv.DictReader(f)]
    with (DATA / "mts-dialog" / "MTS-Dialog-TrainingSet.csv").open() as f:
        out += [(r["dialogue"], r["section_text"]) for r in csv.DictReader(f)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-notes", type=int, default=5)
    args = parser.parse_args()
    used: Counter[str] = Counter()
    note_only: Counter[str] = Counter()
    corpus = pairs()
    for dialogue, note in corpus:
        said = set(content_tokens(dialogue))
        for word in set(content_tokens(note)):
            used[word] += 1
            note_only[word] += word not in said
    kept = sorted(w for w, n in used.items() if n >= args.min_notes and not w[:1].isdigit())
    with OUT.open("w") as f:
        f.write(
            f"# documentation rate of note words: {len(corpus)} dialogue/note pairs of ACI-Bench "
            "train+valid and MTS-Dialog training (CC BY 4.0); built by "
            "bench/build_note_vocabulary.py\n"
        )
        f.write("stem\tnotes\tnote_only\n")
        for w in kept:
            f.write(f"{w}\t{used[w]}\t{note_only[w]}\n")
    print(f"{len(corpus)} pairs, {len(kept)} stems → {OUT}")
    rate = {w: note_only[w] / used[w] for w in kept}
    print("most documentary:", sorted(kept, key=lambda w: (-rate[w], -used[w]))[:40])
    print("least documentary:", sorted(kept, key=lambda w: (rate[w], -used[w]))[:40])


if __name__ == "__main__":
    main()
