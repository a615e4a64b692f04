"""Reading the ACI-Bench encounters copied under ``tests/fixtures/<folder>/`` (each folder's
PROVENANCE.md says which): ``aci_<id>_note.txt`` and ``aci_<id>_dialogue.txt``."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def read_encounter(folder: str, encounter_id: str) -> tuple[str, str]:
    """``(note, dialogue)`` of one copied encounter."""
    base = FIXTURES / folder / f"aci_{encounter_id}"
    note = Path(f"{base}_note.txt").read_text(encoding="utf-8")
    dialogue = Path(f"{base}_dialogue.txt").read_text(encoding="utf-8")
    return note, dialogue
