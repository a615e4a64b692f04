"""Every regular expression clinjudge runs, found rather than listed by hand, and the hostile
strings each must survive (issue 35: regular expressions that cannot explode).

:func:`collect_patterns` finds them in three ways:

1. **Module level** — every ``re.Pattern`` reachable from a clinjudge module's globals: the
   value itself, inside dicts, lists, tuples and sets, in class attributes and in the fields of
   module-level objects (``(pattern, builder)`` tables, ``{name: pattern}`` maps).
2. **Inside functions, from literals** — every ``re.compile/search/match/fullmatch/finditer/
   findall/sub/subn/split`` call in the source (read with :mod:`ast`) whose pattern argument
   evaluates in the module's namespace: a string literal, or a module constant such as
   ``re.search(_WEEKS_DAYS, ...)``.
3. **Built at run time** — a call whose pattern is made from a function's own arguments
   (``re.compile(r"\\b" + re.escape(word))``) cannot be evaluated from the source; each such
   call site must be named in :data:`BUILDERS` with a function that builds its patterns the way
   the module does. :func:`unresolved_sites` lists the sites that are not, so a new builder
   fails the audit until it is covered.

:data:`HOSTILE` holds the fixed 10 kB strings (runs of letters without spaces, hyphen, slash
and apostrophe chains, repeated list words and negation cues, digits with separators,
punctuation and whitespace runs, unicode); :func:`literal_strings` builds more from each
pattern's own words. :func:`timed` runs one pattern operation under a wall-clock limit (the
regex engine checks signals, so a runaway match is interrupted rather than waited for).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import pkgutil
import re
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import clinjudge

#: Length of every hostile string.
SIZE = 10_000
_RE_CALLS = frozenset(
    {"compile", "search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split"}
)


@dataclass(frozen=True)
class Found:
    """A pattern and where it lives: ``module:qualified.name`` or ``module:function@line``."""

    where: str
    pattern: re.Pattern[str]


def clinjudge_modules() -> list[str]:
    """Every module of the clinjudge package, imported."""
    names = ["clinjudge"]
    for info in pkgutil.walk_packages(clinjudge.__path__, "clinjudge."):
        names.append(info.name)
    for name in names:
        importlib.import_module(name)
    return names


def _walk(obj: object, where: str, depth: int, seen: set[int], out: list[Found]) -> None:
    if isinstance(obj, re.Pattern):
        if isinstance(obj.pattern, str):
            out.append(Found(where, obj))
        return
    if depth == 0 or id(obj) in seen or isinstance(obj, str | bytes | int | float):
        return
    seen.add(id(obj))
    if isinstance(obj, dict):
        for key, value in list(obj.items()):
            _walk(value, f"{where}[{key!r}]"[:200], depth - 1, seen, out)
    elif isinstance(obj, list | tuple | set | frozenset):
        for i, value in enumerate(list(obj)):
            _walk(value, f"{where}[{i}]", depth - 1, seen, out)
    elif isinstance(obj, type):
        if obj.__module__.startswith("clinjudge"):
            for key, value in list(vars(obj).items()):
                _walk(value, f"{where}.{key}", depth - 1, seen, out)
    elif type(obj).__module__.startswith("clinjudge") and hasattr(obj, "__dict__"):
        for key, value in list(vars(obj).items()):
            _walk(value, f"{where}.{key}", depth - 1, seen, out)


def module_level_patterns(modules: list[str]) -> list[Found]:
    """Way 1 of the module docstring."""
    out: list[Found] = []
    seen: set[int] = set()
    for name in modules:
        module = importlib.import_module(name)
        for key, value in list(vars(module).items()):
            owner = getattr(value, "__module__", name)
            if isinstance(value, type) and owner != name:
                continue  # a class imported from elsewhere is walked where it is defined
            _walk(value, f"{name}:{key}", 5, seen, out)
    return out


@dataclass(frozen=True)
class CallSite:
    """A ``re.<function>(pattern, ...)`` call inside a function of a clinjudge module."""

    module: str
    function: str
    line: int
    method: str
    pattern_source: str
    flags_source: str | None


def _call_sites(module: str) -> Iterator[CallSite]:
    path = inspect.getsourcefile(importlib.import_module(module))
    if path is None:
        return
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    stack: list[str] = []

    def visit(node: ast.AST) -> None:
        named = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        if named:
            stack.append(getattr(node, "name", "<lambda>"))
        if (
            stack
            and isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.func.attr in _RE_CALLS
            and node.args
        ):
            flags = next((k.value for k in node.keywords if k.arg == "flags"), None)
            position = 1 if node.func.attr == "compile" else 2
            if flags is None and len(node.args) > position and node.func.attr != "sub":
                flags = node.args[position]
            yield_sites.append(
                CallSite(
                    module,
                    ".".join(stack),
                    node.lineno,
                    node.func.attr,
                    ast.unparse(node.args[0]),
                    ast.unparse(flags) if flags is not None else None,
                )
            )
        for child in ast.iter_child_nodes(node):
            visit(child)
        if named:
            stack.pop()

    yield_sites: list[CallSite] = []
    visit(tree)
    yield from yield_sites


def _evaluate(site: CallSite) -> re.Pattern[str] | None:
    """The site's pattern when its source evaluates in the module namespace, else ``None``."""
    namespace = vars(importlib.import_module(site.module))
    try:
        source = eval(site.pattern_source, dict(namespace))  # noqa: S307 — our own source
        flags = eval(site.flags_source, dict(namespace)) if site.flags_source else 0  # noqa: S307
    except (NameError, AttributeError, TypeError):
        return None
    if isinstance(source, re.Pattern):
        return source
    return re.compile(source, flags) if isinstance(source, str) else None


def function_patterns(modules: list[str]) -> tuple[list[Found], list[CallSite]]:
    """Ways 2 and 3 of the module docstring: ``(patterns, sites that could not be evaluated)``."""
    found: list[Found] = []
    unresolved: list[CallSite] = []
    for module in modules:
        for site in _call_sites(module):
            pattern = _evaluate(site)
            if pattern is not None:
                where = f"{site.module}:{site.function}@{site.line} re.{site.method}"
                found.append(Found(where, pattern))
            else:
                unresolved.append(site)
    return found, unresolved


def _disagreement_kinds() -> list[re.Pattern[str]]:
    from clinjudge.metrics import disagreements

    tables = [v for v in vars(disagreements).values() if isinstance(v, list | tuple)]
    return [
        re.compile(pattern, re.I)
        for table in tables
        for row in table
        if isinstance(row, tuple) and len(row) == 2 and isinstance(pattern := row[1], str)
    ]


def _numeric_values() -> list[re.Pattern[str]]:
    from clinjudge.judges.numeric_answer import value_pattern

    return [value_pattern(kind) for kind in ("number", "date", "weeks_days")]


def _phrases() -> list[re.Pattern[str]]:
    from clinjudge.inject.material import phrase_pattern

    return [phrase_pattern(p) for p in ("chest pain", "left-sided chest wall pain", "a/b")]


def _referral_stems() -> list[re.Pattern[str]]:
    return [re.compile(rf"\b{re.escape(stem)}") for stem in ("cardiolog", "physio", "ent")]


def _prompt_delimiters() -> list[re.Pattern[str]]:
    from clinjudge.prompts import list_prompts, load_prompt
    from clinjudge.prompts.registry import delimiters_of

    texts = [load_prompt(name).text for name in list_prompts()]
    found = [delimiters_of(t) for t in [*texts, "<Conversation> <<<"]]
    return [p for p in found if p is not None]


def _negation_rx() -> list[re.Pattern[str]]:
    from clinjudge.text import negation

    return [p for p in vars(negation).values() if isinstance(p, re.Pattern)] + list(
        negation._RX.values()
    )


#: ``(module, function)`` of each call site whose pattern is built from the function's own
#: arguments → patterns built the way that module builds them.
BUILDERS: dict[tuple[str, str], Callable[[], list[re.Pattern[str]]]] = {
    ("clinjudge.metrics.disagreements", "kind_of"): _disagreement_kinds,
    ("clinjudge.judges.numeric_answer", "value_pattern"): _numeric_values,
    ("clinjudge.inject.material", "phrase_pattern"): _phrases,
    ("clinjudge.judges.unvoiced_orders", "unmentioned_referral"): _referral_stems,
    ("clinjudge.text.negation", "_rx"): _negation_rx,
    ("clinjudge.prompts.registry", "delimiters_of"): _prompt_delimiters,
}


def collect_patterns() -> tuple[list[Found], list[CallSite]]:
    """Every pattern (deduplicated by source and flags) and the call sites left uncovered."""
    modules = clinjudge_modules()
    found = module_level_patterns(modules)
    from_functions, unresolved = function_patterns(modules)
    found += from_functions
    uncovered = [s for s in unresolved if (s.module, s.function) not in BUILDERS]
    for (module, function), build in BUILDERS.items():
        found += [Found(f"{module}:{function}()", p) for p in build()]
    unique: dict[tuple[str, int], Found] = {}
    for f in found:
        unique.setdefault((f.pattern.pattern, f.pattern.flags), f)
    return sorted(unique.values(), key=lambda f: f.where), uncovered


def _fill(unit: str, size: int = SIZE) -> str:
    return (unit * (size // max(1, len(unit)) + 1))[:size]


#: Fixed hostile strings, each SIZE characters (module docstring).
HOSTILE: dict[str, str] = {
    "letters": _fill("a"),
    "letters then punctuation": _fill("a")[:-3] + ", no",
    "mixed case": _fill("aBcDeF"),
    "hyphen chain": _fill("left-sided-chest-wall-tenderness-reproducible-"),
    "slash chain": _fill("a/b/"),
    "apostrophe chain": _fill("don't'"),
    "list words": _fill("pain, pain or pain and "),
    "list words no space": _fill("pain,pain/or/and-"),
    "negation cues": _fill("no not never denies without nil none "),
    "negation commas": _fill("no , "),
    "history cues": _fill("history of past medical history of "),
    "family cues": _fill("mother's father's mom - "),
    "digit slashes": _fill("1/2/3/"),
    "digit dots": _fill("1.2.3."),
    "blood pressures": _fill("120/80 "),
    "thousands": _fill("1,000,"),
    "masked numbers": _fill("# / # - # mg # x "),
    "spelled numbers": _fill("one hundred and twenty five point "),
    "punctuation": _fill("!?.,;:"),
    "full stops": _fill("."),
    "hyphens": _fill("-"),
    "stars and underscores": _fill("*_#"),
    "colons": _fill(":"),
    "brackets": _fill("(["),
    "spaces": _fill(" "),
    "tabs and spaces": _fill(" \t"),
    "newlines": _fill("\n"),
    "blank lines with spaces": _fill(" \n"),
    "crlf": _fill("\r\n"),
    "line separators": _fill("\u2028"),
    "accented": _fill("éàüñ"),
    "cjk": _fill("胸痛無"),
    "dotted capital i": _fill("İ"),
    "header lines": _fill("PLAN:\nS: x\n"),
    "speaker tags": _fill("[doctor] Doctor: "),
    "label pairs": _fill("Blood pressure: 1, Heart rate: 2, "),
    "numbered sentences": _fill("1. 2. "),
    "short sentences": _fill("Pain. "),
    "abbreviations": _fill("Dr. e.g. No. 5. U.S.A. (a. b.) "),
}


def literal_words(pattern: re.Pattern[str]) -> list[str]:
    """The words a pattern spells out (escapes and group names removed), in order, unique."""
    source = re.sub(r"\\.|\(\?P?<[a-z_]+>", " ", pattern.pattern)
    return list(dict.fromkeys(re.findall(r"[A-Za-z']{2,}", source)))[:40]


#: How many of a pattern's words each get a string of their own.
WORDS_ALONE = 20


def literal_strings(pattern: re.Pattern[str]) -> dict[str, str]:
    """Hostile strings made of the pattern's own words: all of them spaced, hyphenated and
    glued, and each word repeated alone (``"um um um …"``, ``"um, um, …"``): a loop over
    optional parts explodes on one of its own words said again and again."""
    words = literal_words(pattern) or ["no"]
    strings = {
        "own words spaced": _fill(" ".join(words) + " "),
        "own words hyphenated": _fill("-".join(words) + "-"),
        "own words glued": _fill("".join(words)),
    }
    for word in words[:WORDS_ALONE]:
        strings[f"{word!r} repeated"] = _fill(word + " ")
        strings[f"{word!r}, repeated"] = _fill(word + ", ")
    return strings


class Overrun(Exception):
    """A pattern operation ran past its limit and was interrupted."""


@contextlib.contextmanager
def _limit(seconds: float) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only: no limit elsewhere
        return

    def interrupt(*_: object) -> None:
        raise Overrun

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


#: The four ways a pattern meets text; ``findall``, ``sub``, ``subn`` and ``split`` scan as
#: ``finditer`` does.
OPERATIONS: dict[str, Callable[[re.Pattern[str], str], object]] = {
    "search": lambda p, s: p.search(s),
    "match": lambda p, s: p.match(s),
    "fullmatch": lambda p, s: p.fullmatch(s),
    "finditer": lambda p, s: sum(1 for _ in p.finditer(s)),
}


def timed_one(
    pattern: re.Pattern[str], text: str, operation: str, limit: float, tries: int = 3
) -> float:
    """Seconds one operation took on ``text``, the fastest of up to ``tries`` runs (a run under
    ``limit`` ends the trying): a machine busy with other work can stall one run past the limit,
    a pattern that backtracks without bound is slow every time. ``inf`` when every run was
    interrupted at ``limit``."""
    best = float("inf")
    for _ in range(tries):
        started = time.perf_counter()
        try:
            with _limit(limit):
                OPERATIONS[operation](pattern, text)
        except Overrun:
            continue
        best = min(best, time.perf_counter() - started)
        if best < limit:
            break
    return best


def _ended(text: str) -> str:
    """``text`` whose last character is of another kind: a run that a pattern consumes and
    then fails at its end is where backtracking costs most."""
    return text[:-1] + ("!" if text[-1].isalnum() else "x")


def hostile_for(pattern: re.Pattern[str]) -> dict[str, str]:
    """The fixed hostile strings and the pattern's own-word strings, each also with a last
    character of another kind."""
    strings = {**HOSTILE, **literal_strings(pattern)}
    return {**strings, **{f"{name}, ended": _ended(text) for name, text in strings.items()}}


def slowest(
    pattern: re.Pattern[str], limit: float, operations: Iterable[str] = tuple(OPERATIONS)
) -> tuple[float, str, str]:
    """``(seconds, operation, string name)`` of the pattern's slowest operation over its
    hostile strings (stops at the first interrupted one)."""
    worst = (0.0, "", "")
    for name, text in hostile_for(pattern).items():
        for operation in operations:
            worst = max(worst, (timed_one(pattern, text, operation, limit), operation, name))
            if worst[0] == float("inf"):
                return worst
    return worst


_SCANS = frozenset({"finditer", "findall", "sub", "subn", "split"})
_METHODS = frozenset({"search", "match", "fullmatch"}) | _SCANS
ALL_OPERATIONS = frozenset(OPERATIONS)
#: Attributes of a pattern that read no text.
_INERT = frozenset({"pattern", "flags", "groups", "groupindex"})


def _operation(method: str) -> str:
    return "finditer" if method in _SCANS else method


@dataclass
class Uses:
    """How the source uses patterns (module docstring of :func:`uses_of`)."""

    direct: dict[int, set[str]]  # id(pattern) → operations called on it by name
    indirect: dict[str, set[str]]  # module → operations called on patterns it cannot name
    escapes: dict[str, set[str]]  # global name → modules where it is passed, stored or looped
    mentions: dict[str, set[str]]  # global name → modules that mention it


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _method_call(node: ast.AST, parents: dict[int, ast.AST]) -> tuple[ast.AST, str] | None:
    """``(receiver, method)`` when ``node`` is (inside subscripts of) the receiver of a
    pattern-method call: ``NAME.match(...)``, ``NAME["key"].finditer(...)``."""
    while isinstance(parent := parents.get(id(node)), ast.Subscript) and parent.value is node:
        node = parent
    parent = parents.get(id(node))
    call = parents.get(id(parent)) if parent is not None else None
    if (
        isinstance(parent, ast.Attribute)
        and parent.value is node
        and parent.attr in _METHODS
        and isinstance(call, ast.Call)
        and call.func is parent
    ):
        return node, parent.attr
    return None


def uses_of(modules: list[str]) -> Uses:
    """Which operations the source calls on which patterns.

    A call ``X.method(...)`` whose receiver ``X`` evaluates in its module to a pattern is a
    *direct* use of that pattern. One whose receiver cannot be evaluated (a parameter, a loop
    variable: ``regex.match(line)``) is an *indirect* use in that module (``str.split`` is
    left out: it is everywhere and is no pattern). A global name that appears other than as a
    receiver (passed as an argument, put in a tuple, looped over) *escapes*; a pattern under
    an escaping name may meet any indirect use of the modules that mention that name.
    """
    uses = Uses({}, {}, {}, {})
    for module in modules:
        namespace = vars(importlib.import_module(module))
        path = inspect.getsourcefile(importlib.import_module(module))
        if path is None:
            continue
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
        parents = _parents(tree)
        for node in ast.walk(tree):
            name = node.id if isinstance(node, ast.Name) else None
            if isinstance(node, ast.Attribute):
                name = node.attr
            if name is None:
                continue
            uses.mentions.setdefault(name, set()).add(module)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
                continue
            called = _method_call(node, parents)
            if called is None:
                parent = parents.get(id(node))
                if not (isinstance(parent, ast.Attribute) and parent.attr in _INERT):
                    uses.escapes.setdefault(name, set()).add(module)
                continue
            receiver, method = called
            try:
                target = eval(ast.unparse(receiver), dict(namespace))  # noqa: S307
            except Exception:
                target = None
            if isinstance(target, re.Pattern):
                uses.direct.setdefault(id(target), set()).add(_operation(method))
            elif method != "split":
                uses.indirect.setdefault(module, set()).add(_operation(method))
                uses.escapes.setdefault(name, set()).add(module)
    return uses


def operations_for(found: Found, uses: Uses) -> frozenset[str]:
    """The operations the source may run ``found`` with (all four when that cannot be told)."""
    module, _, rest = found.where.partition(":")
    if "@" in rest:  # a literal at a re.<function> call site: that function's operation
        method = rest.rsplit("re.", 1)[-1]
        return ALL_OPERATIONS if method == "compile" else frozenset({_operation(method)})
    if rest.endswith("()"):
        return ALL_OPERATIONS  # built at run time (BUILDERS): its use is not traced
    root = re.split(r"[\[.]", rest, maxsplit=1)[0]
    ops = set(uses.direct.get(id(found.pattern), set()))
    if root in uses.escapes:
        where = uses.mentions.get(root, {module})
        indirect = set().union(*(uses.indirect.get(m, set()) for m in where))
        ops |= indirect or ALL_OPERATIONS
    return frozenset(ops) or ALL_OPERATIONS
