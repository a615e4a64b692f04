"""Split a clinical note into SOAP sections (SPEC §1, "Claims": headers vary — map them).

A line opens a section when it is a known header (:mod:`clinjudge.text.headers`):

1. **Own line** — ``PHYSICAL EXAM``, ``CC:``, ``Past medical history:``, ``**Plan**``. A bare
   header with neither ALL CAPS nor a trailing ``:``/``-`` must follow a blank line (so the plan
   item ``"Examination"`` in a list is not a header) and is a sub-label under an ALL-CAPS header
   (``Procedures`` under ``PAST HISTORY``). A line ending in ``.`` is a sentence (``Follow-up.``).
2. **Label with content** — ``PMH: Asthma``, ``Imp- migraine``, ``PC; diarrhoea``,
   ``SHx lawyer``. Clinical codes (``PMH``, ``DH``, ``Imp``, ``O/E``...) and ALL-CAPS labels always
   open a section. A full-word Title-case label (``Labs:``, ``Impression:``) opens one only when
   the current section is unheaded or itself labelled in that terse style: under an ALL-CAPS
   header such as ``RESULTS`` it is a sub-label (``Impression: Normal CT of abdomen.`` stays an
   objective result).
3. **Code after a sentence** — ``PC: Abdominal pain. HPC: Periumbilical pain`` (codes only).
4. ``NKDA`` / ``NKA`` outside a subjective section starts an unheaded subjective section.
5. **SOAP letters** — ``S:``, ``O -``, ``A:``, ``P:``, ``A/P:`` open their sections in a note
   where at least three different letters open lines.

Text before the first header is subjective. Assessment sections are then split into
assessment/plan parts: a line (or a sentence) starting with a plan marker (``Plan:``,
``• Medical Treatment:``, ``- Additional Testing:``, ``Patient Education and Counseling:``,
``Specialist Referrals:``, ``Patient Agreements:``) starts plan content, which lasts until an
assessment marker (``Medical Reasoning:``, ``Impression:``), a numbered problem (``2. Type 2
diabetes.``) or, after a blank line, a short problem heading (``Depression.``). Both parts keep
the written header (``ASSESSMENT AND PLAN``). Prose A&P without markers stays assessment.

Sections do not overlap; ``start`` is where the body starts (after the header), ``end`` is after
its last non-space character; header lines and blank space lie between sections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clinjudge.text.headers import (
    ABBREVIATION_LABELS,
    ASSESSMENT_MARKERS,
    HEADER_SOAP,
    PLAN_MARKERS,
    SPACE_SEPARATED_LABELS,
    normalize_label,
)
from clinjudge.types import Note, Section, SoapSection

_LINE_RE = re.compile(r"^.*$", re.MULTILINE)
#: Runs of spaces and markup around a label are taken whole (possessive): handing part of a
#: run to the label reads no other header, and trying every split was cubic in the run.
_COLON_LABEL_RE = re.compile(
    r"[ \t]*+[#*_]*+[ \t]*+(?P<label>[^:\n]{1,45}?)[ \t]*+[*_]*+[ \t]*+:[*_]*[ \t]*(?P<rest>.*)"
)
_LOOSE_SEPARATOR = r"(?:[ \t]*[;,.][ \t]*|[ \t]+[-–][ \t]*|[-–][ \t]+)"
_LOOSE_LABEL_RE = re.compile(
    rf"[ \t]*(?P<label>[A-Za-z][A-Za-z/&]{{1,5}}){_LOOSE_SEPARATOR}(?P<rest>.*)"
)
_SPACE_LABEL_RE = re.compile(r"[ \t]*(?P<label>[A-Z][A-Za-z]{1,4})[ \t]+(?P<rest>\S.*)")
_MIDLINE_CODE_RE = re.compile(r"(?<=[.!?])[ \t]+(?P<label>[A-Za-z/&]{2,6})[ \t]*:[ \t]*(?=\S)")
_NKDA_RE = re.compile(r"[ \t]*(?:NKDA|NKA|NKFA|NKDA/NKFA)\b")
_MARKER_RE = re.compile(
    r"[ \t]*(?:[•·\-*–][ \t]*|\d{1,2}[.)][ \t]*)?(?P<label>[A-Za-z][A-Za-z &/\-]{1,45}?)[ \t]*:"
)
_MIDLINE_MARKER_RE = re.compile(
    r"(?<=[.!?])[ \t]+(?=(?:[•\-*–][ \t]*)?(?P<label>[A-Za-z][A-Za-z &/\-]{1,45}?)[ \t]*:)"
)
_NUMBERED_RE = re.compile(r"[ \t]*\d{1,2}[.)][ \t]")
_HEADER_LEAD = "#*_"
_HEADER_TRAIL = "*_:;,.-–—"


@dataclass
class _Open:
    """A section being read: header as written, class, style, body start, header start."""

    header: str
    soap: SoapSection
    style: str  # "none" (no header), "caps" (own-line ALL CAPS), "title", "inline"
    body: int
    at: int  # where the header begins (the previous section ends there)


def _clean(written: str) -> str:
    """A written header without leading markup (``#*_``) and trailing markup or punctuation
    (``*_:;,.-–—``), blanks included: two strips, linear (a pattern ``[...]+$`` re-read every
    run that does not reach the end, once per character)."""
    start, end = 0, len(written)
    while start < end and (written[start] in _HEADER_LEAD or written[start].isspace()):
        start += 1
    while end > start and (written[end - 1] in _HEADER_TRAIL or written[end - 1].isspace()):
        end -= 1
    return written[start:end]


def _is_caps(written: str) -> bool:
    letters = [c for c in written if c.isalpha()]
    return bool(letters) and all(c.isupper() for c in letters)


def _own_line_header(line: str, prev_blank: bool, current: _Open) -> tuple[str, SoapSection] | None:
    core = line.strip()
    if core.endswith("."):  # "Follow-up." is a sentence, not a header
        return None
    soap = HEADER_SOAP.get(normalize_label(core))
    if soap is None:
        return None
    written = _clean(core)
    if _is_caps(written) or core.rstrip("*_ \t").endswith((":", "-", "–", ";")):
        return written, soap
    # bare Title-case line: a header after a blank line, except under an ALL-CAPS header where
    # it is a sub-label ("Medications" / "Procedures" under PAST HISTORY)
    if prev_blank and current.style != "caps":
        return written, soap
    return None


def _label_header(line: str, current: _Open) -> tuple[str, SoapSection, int] | None:
    """``(header, soap, offset of content in line)`` for a label followed by content."""
    for regex in (_COLON_LABEL_RE, _LOOSE_LABEL_RE, _SPACE_LABEL_RE):
        m = regex.match(line)
        if not m or not m.group("rest").strip():
            continue
        written = _clean(m.group("label"))
        key = normalize_label(written)
        soap = HEADER_SOAP.get(key)
        if soap is None:
            continue
        if regex is _LOOSE_LABEL_RE and key not in ABBREVIATION_LABELS:
            continue
        if regex is _SPACE_LABEL_RE and key not in SPACE_SEPARATED_LABELS:
            continue
        structured = current.style == "caps"
        if key in ABBREVIATION_LABELS or _is_caps(written) or not structured:
            return written, soap, m.start("rest")
    return None


#: A SOAP letter opening a line: "S:", "O -", "A/P:", "A&P:".
_LETTER_RE = re.compile(r"[ \t]*(?P<label>[SOAP]|A/P|A&P)[ \t]*[:\-–][ \t]*", re.I)
_LETTERS: dict[str, SoapSection] = {
    "s": "subjective", "o": "objective", "a": "assessment", "p": "plan", "a/p": "assessment",
    "a&p": "assessment",
}  # fmt: skip


def _letter_headers(text: str) -> dict[int, tuple[str, SoapSection, int]]:
    """Line start → (header, class, body offset) for the SOAP letters of a note written in
    that style — at least three different letters open lines ("S:", "O:", "A:", "P:"); a lone
    "P: 72" in a vitals list is a pulse, not a plan."""
    found = {}
    for m in _LINE_RE.finditer(text):
        hit = _LETTER_RE.match(m.group())
        if hit:
            label = hit.group("label")
            found[m.start()] = (label, _LETTERS[label.lower()], m.start() + hit.end())
    return found if len({soap for _, soap, _ in found.values()}) >= 3 else {}


def _find_openings(text: str) -> list[_Open]:
    """Every section opening in note order (before the assessment/plan split)."""
    current = _Open("", "subjective", "none", 0, 0)
    opened = [current]
    prev_blank = True
    letters = _letter_headers(text)
    for m in _LINE_RE.finditer(text):
        line, s = m.group(), m.start()
        if not line.strip():
            prev_blank = True
            continue
        if s in letters:
            header, soap, body = letters[s]
            current = _Open(header, soap, "inline", body, s)
            opened.append(current)
            prev_blank = False
            continue
        own = _own_line_header(line, prev_blank, current)
        if own:
            style = "caps" if _is_caps(own[0]) else "title"
            current = _Open(own[0], own[1], style, m.end(), s)
            opened.append(current)
        else:
            hit = _label_header(line, current)
            if hit:
                current = _Open(hit[0], hit[1], "inline", s + hit[2], s)
                opened.append(current)
            elif current.soap != "subjective" and _NKDA_RE.match(line):
                current = _Open("", "subjective", "inline", s, s)
                opened.append(current)
            for mid in _MIDLINE_CODE_RE.finditer(line, current.body - s if current.at == s else 0):
                key = normalize_label(mid.group("label"))
                if key in ABBREVIATION_LABELS and key in HEADER_SOAP:
                    label_at = s + mid.start("label")
                    current = _Open(
                        _clean(mid.group("label")),
                        HEADER_SOAP[key],
                        "inline",
                        s + mid.end(),
                        label_at,
                    )
                    opened.append(current)
        prev_blank = False
    return opened


def _marker_class(label: str) -> SoapSection | None:
    key = normalize_label(label)
    if key in PLAN_MARKERS:
        return "plan"
    if key in ASSESSMENT_MARKERS:
        return "assessment"
    return None


def _assessment_plan_points(text: str, start: int, end: int) -> list[tuple[int, SoapSection]]:
    """Offsets inside an assessment body where plan (or assessment again) content begins."""
    points: list[tuple[int, SoapSection]] = []
    prev_blank = False
    for m in _LINE_RE.finditer(text, start, end):
        line, s = m.group(), m.start()
        if not line.strip():
            prev_blank = True
            continue
        lead = s + len(line) - len(line.lstrip())
        mk = _MARKER_RE.match(line)
        cls = _marker_class(mk.group("label")) if mk else None
        if cls:
            points.append((lead, cls))
        elif _NUMBERED_RE.match(line) or (
            prev_blank and len(line.strip()) <= 60 and len(line.split()) <= 8
        ):
            points.append((lead, "assessment"))
        for mid in _MIDLINE_MARKER_RE.finditer(line):
            cls = _marker_class(mid.group("label"))
            if cls:
                points.append((s + mid.end(), cls))
        prev_blank = False
    return points


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while end > start and text[end - 1].isspace():
        end -= 1
    while start < end and text[start].isspace():
        start += 1
    return start, end


def _split_assessment(text: str, sec: Section) -> list[Section]:
    points = _assessment_plan_points(text, sec.start, sec.end)
    if not any(cls == "plan" for _, cls in points):
        return [sec]
    cuts: list[tuple[int, SoapSection]] = [(sec.start, "assessment")]
    for at, cls in points:
        if cls != cuts[-1][1]:
            cuts.append((at, cls))
    out = []
    for i, (at, cls) in enumerate(cuts):
        stop = cuts[i + 1][0] if i + 1 < len(cuts) else sec.end
        a, b = _trimmed(text, at, stop)
        if b > a:
            out.append(Section(header=sec.header, soap=cls, start=a, end=b))
    return out


def segment_note(text: str) -> Note:
    """SOAP sections of ``text`` (module docstring for the rules)."""
    opened = _find_openings(text)
    sections: list[Section] = []
    for i, op in enumerate(opened):
        stop = opened[i + 1].at if i + 1 < len(opened) else len(text)
        a, b = _trimmed(text, op.body, stop)
        if i == 0 and b <= a:
            continue  # no text before the first header
        a = min(a, b)
        sec = Section(header=op.header, soap=op.soap, start=a, end=b)
        sections.extend(_split_assessment(text, sec) if sec.soap == "assessment" else [sec])
    return Note(text=text, sections=sections)
