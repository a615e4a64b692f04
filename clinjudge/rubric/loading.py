"""Reading a rubric file, and an item's own criteria, into a checked
:class:`~clinjudge.rubric.model.Rubric` (issue 39 item 1).

A ``.md`` file is Markdown with YAML front matter (the rubric) and a body (guidance for the
grader); any other file is YAML alone. The YAML is read by PyYAML's ``safe_load`` (a dependency
already: the prompt files' front matter is read the same way). Every error — an unreadable file,
bad YAML, a field of the wrong type, an unknown field, a missing one — becomes ONE
:class:`~clinjudge.errors.ConfigError` line naming the file, the field (``criteria[2].points``)
and the fix.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from clinjudge.errors import ConfigError
from clinjudge.rubric.model import Criterion, Rubric, check_scale_criterion

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
#: The fix to suggest, by the field an error is about.
FIXES: dict[str, str] = {
    "name": "give the rubric a name (name: my-rubric)",
    "version": "give a version (version: 1)",
    "reads": "list the columns it reads: transcript, note, answer, question, reference note",
    "mode": "use mode: met (met / not met per criterion) or mode: scale (a level 1..N)",
    "criteria": "list criteria, each with an id and a text (or a fact)",
    "criteria_column": "name the column holding each item's criteria as a JSON list",
    "id": "give each criterion a unique id (id: c1)",
    "text": "say what the grader checks (text: The note states the allergy.)",
    "points": "give points as a number, negative for what must not appear (points: -5)",
    "tags": "give tags as a list (tags: [axis:accuracy]) or a mapping (tags: {axis: accuracy})",
    "critical": "use critical: true or false",
    "fact": "name the clinical fact the note must state (fact: metformin 500 mg twice daily)",
    "kind": "use kind: documents (the note states the fact) or contradicts (it states otherwise)",
    "levels": "define each level 1..N (levels: {1: wrong, 2: ..., 5: exact})",
    "scale": "define each level 1..N (scale: {1: poor, 2: ..., 5: excellent})",
    "aggregate": "use aggregate: {critical_gate: true, n_resamples: 2000}",
    "critical_gate": "use critical_gate: true or false",
    "n_resamples": "use n_resamples: a whole number of 100 or more",
    "prompt": "give the grader prompt file's path, relative to the rubric",
}


def load_rubric(path: str | Path) -> Rubric:
    """The rubric of ``path`` (module docstring), with its hash and resolved path.

    Raises:
        ConfigError: one line naming the file, the field and the fix.
    """
    where = Path(path).expanduser()
    try:
        raw = where.read_bytes()
        content = raw.decode("utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"rubric {where}: cannot read it ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"rubric {where}: not UTF-8 text; save it as UTF-8") from exc
    data, guidance = _split(content, where)
    extra = {"guidance": guidance, "sha256": hashlib.sha256(raw).hexdigest(), "path": str(where)}
    for own in ("guidance", "sha256", "path"):
        if own in data:
            raise ConfigError(f"rubric {where}: field {own!r} is set by the loader; remove it")
    rubric = checked(Rubric, {**data, **extra}, f"rubric {where}")
    if rubric.prompt is not None and not _prompt_path(rubric).is_file():
        raise ConfigError(
            f"rubric {where}: prompt: no such file {_prompt_path(rubric)}; {FIXES['prompt']}"
        )
    return rubric


def prompt_file(rubric: Rubric) -> Path | None:
    """The grader prompt the rubric names, resolved against the rubric's folder."""
    return None if rubric.prompt is None else _prompt_path(rubric)


def _prompt_path(rubric: Rubric) -> Path:
    given = Path(rubric.prompt or "").expanduser()
    return given if given.is_absolute() else Path(rubric.path).parent / given


def _split(content: str, where: Path) -> tuple[dict[str, Any], str]:
    """The YAML mapping of the file and the Markdown body (empty for a YAML file)."""
    import yaml

    body = ""
    text = content
    if where.suffix.lower() in (".md", ".markdown"):
        match = _FRONT_MATTER.match(content)
        if match is None:
            raise ConfigError(
                f"rubric {where}: no YAML front matter; start the file with a '---' line, the "
                "rubric's fields, and another '---' line"
            )
        text, body = match.group(1), content[match.end() :].strip()
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "bad YAML"
        raise ConfigError(f"rubric {where}: YAML{at}: {problem}; fix the syntax there") from exc
    if not isinstance(data, dict):
        raise ConfigError(
            f"rubric {where}: the rubric must be a YAML mapping (name: ..., criteria: ...)"
        )
    return data, body


def checked(model: type, data: Any, what: str) -> Any:
    """``model`` validated from ``data``; a validation error becomes one ConfigError line."""
    from pydantic import ValidationError

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{what}: {_one_line(exc)}") from exc


def _one_line(exc: Any) -> str:
    """The first error of a pydantic ``ValidationError``: its field path, what is wrong, the
    fix; and how many more there are."""
    errors = exc.errors()
    first = errors[0]
    loc = [p for p in first["loc"] if not (isinstance(p, str) and "[" in p)]
    field = _field_path(loc)
    named = next((str(p) for p in reversed(loc) if isinstance(p, str) and p in FIXES), None)
    msg = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        msg = "unknown field"
        fix = "remove it, or check its spelling"
    elif first["type"] == "missing":
        fix = FIXES.get(named or "", "add it")
    else:
        fix = FIXES.get(named or "", "see the rubric format in clinjudge/rubric/model.py")
    if "; " in msg:  # the check that failed says the fix itself
        msg, fix = msg.split("; ", 1)
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    where = f"{field}: " if field else ""
    return f"{where}{msg}; {fix}{more}"


def _field_path(loc: list[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def item_criteria(rubric: Rubric, value: Any, item_id: str) -> tuple[Criterion, ...]:
    """An item's own criteria from its ``criteria_column`` value (a JSON list, or a list),
    checked like the file's; a scale rubric's criteria need levels.

    Raises:
        ConfigError: one line naming the item, the column, the field and the fix.
    """
    what = f"item {item_id!r}, column {rubric.criteria_column!r}"
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{what}: not JSON ({exc.msg}); give a JSON list of criteria"
            ) from exc
    if not isinstance(value, list):
        raise ConfigError(f"{what}: expected a JSON list of criteria, got {type(value).__name__}")
    found = tuple(checked(Criterion, c, f"{what}, criterion {i}") for i, c in enumerate(value))
    ids = [c.id for c in (*rubric.criteria, *found)]
    if len(set(ids)) != len(ids):
        twice = next(i for i in ids if ids.count(i) > 1)
        raise ConfigError(f"{what}: criterion id {twice!r} is used twice; give unique ids")
    if rubric.mode == "scale":
        for c in found:
            try:
                check_scale_criterion(c, rubric.scale)
            except ValueError as exc:
                raise ConfigError(f"{what}: {exc}") from exc
    return found
