"""A judge from one rubric file (issue 39) as ``--judges rubric:FILE``: researchers write
criteria, not code.

The file (:mod:`clinjudge.rubric.model`, loaded by :func:`clinjudge.rubric.loading.
load_rubric`) names the columns it reads, its criteria (and optionally a column of per-item
criteria, HealthBench's layout), the grading mode and the aggregate. The graph
(:mod:`clinjudge.graphs.rubric`) grades each criterion — on the LLM backend with the
``rubric.grade_met`` or ``rubric.grade_scale`` prompt (or the rubric's own ``prompt``), offline
the fact criteria by the omission judge's reading and every other one recorded "needs a model"
— and scores the item (:mod:`clinjudge.rubric.scoring`); the summary is
:func:`clinjudge.rubric.aggregate.summarize`. The judge's name in a run is ``rubric:FILE`` as
given; the file's sha256 is in its identity (a changed rubric is not resumed into an old run)
and provenance. A row whose criteria failed (a call error, a parse failure) is judged again by
the next run; ``score(row)`` is the item score (higher = better text).

With a jury (``--jury MODEL@URL,MODEL@URL,…``; ``BuildOptions.jury``) every juror grades every
criterion with the same prompt and the verdict is the jury's (:mod:`clinjudge.rubric.jury`);
the summary adds how far the jurors agree (:mod:`clinjudge.rubric.jury_agreement`), the
provenance each juror's model, host, decoding, prompts and calls and tokens, and ``usage`` the
sum with each juror's under ``jurors``. The jurors' models, decodings and prompt hashes are in
the judge's identity (another jury is not resumed into the run). ``rubric.batch_size`` sets
each juror's criteria per call; ``rubric.offline_facts=on`` is refused with a jury
(:data:`JURY_FACTS`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clinjudge.errors import ConfigError
from clinjudge.evaluators.base import BaseEvaluator, check_options
from clinjudge.evaluators.registry import judge

if TYPE_CHECKING:
    from clinjudge.datasets.items import Item
    from clinjudge.evaluators.base import BuildOptions
    from clinjudge.grounding.backend import ModelAccess
    from clinjudge.knowledge.base import KnowledgeBase
    from clinjudge.llm_settings import Juror
    from clinjudge.rubric.model import Rubric

PREFIX = "rubric:"
#: ``--option rubric.KEY=VALUE``: criteria per model call, and whether fact criteria are graded
#: by the knowledge-grounded reading (on: the offline default; on a model, the model grades
#: the rest) or by the model (off: the model backend's default; offline they need a model).
OPTIONS = ("batch_size", "offline_facts")
SWITCH = {"on": True, "true": True, "1": True, "off": False, "false": False, "0": False}
#: A jury grades every criterion, facts too: the knowledge reading is one fixed grader, not a
#: juror, and would count as unanimous agreement in the jury's kappa.
JURY_FACTS = (
    "rubric.offline_facts=on does not apply to a jury (--jury): every juror grades every "
    "criterion, facts too; drop the option or the jury"
)


class RubricEvaluator(BaseEvaluator):
    kind = "rubric"

    def __init__(
        self,
        name: str,
        rubric: Rubric,
        access: ModelAccess,
        kb: KnowledgeBase | None,
        settings: dict[str, Any] | None = None,
        jury: list[tuple[Juror, ModelAccess]] | None = None,
    ) -> None:
        """``settings``: the ``--option rubric.KEY=VALUE`` given (:data:`OPTIONS`), checked;
        ``jury``: each juror with its model access (``--jury``).

        Raises:
            ConfigError: ``offline_facts`` on with a jury (:data:`JURY_FACTS`).
        """
        from clinjudge.graphs.rubric import BATCH, JurorSeat, RubricContext, build_graph

        given = dict(settings or {})
        super().__init__(access, given)
        self.name = name
        self.rubric = rubric
        self.needs_source = "transcript" in rubric.reads
        self._graph = build_graph()
        prompt = access.prompts[0] if access.caller else None
        self.jury = list(jury or [])
        seats = [JurorSeat(j.name, a.caller, a.prompts[0]) for j, a in self.jury if a.caller]
        if self.jury and given.get("offline_facts"):
            raise ConfigError(JURY_FACTS)
        offline_facts = given.get("offline_facts", access.caller is None and not self.jury)
        batch = given.get("batch_size", BATCH)
        self._context = RubricContext(
            rubric, kb, access.caller, prompt, batch, offline_facts, jury=seats
        )

    def identity(self) -> dict[str, Any]:
        from clinjudge.evaluators.base import model_identity

        jurors = [model_identity(p) for p in self._jurors()]
        return {
            **super().identity(),
            "rubric_sha256": self.rubric.sha256,
            **({"jury": jurors} if jurors else {}),
        }

    def provenance(self) -> dict[str, Any]:
        keep = ("path", "name", "version", "mode", "sha256")
        jury = {"jury": self._jurors()} if self.jury else {}
        return {
            **super().provenance(),
            "rubric": {k: getattr(self.rubric, k) for k in keep},
            **jury,
        }

    def _jurors(self) -> list[dict[str, Any]]:
        """Each juror's provenance (no key, the URL without credentials) with its usage."""
        from clinjudge.grounding.backend import with_output_modes

        return [
            {
                "juror": juror.name,
                **with_output_modes(access.provenance, access.caller),
                "usage": access.caller.usage.as_dict() if access.caller else None,
            }
            for juror, access in self.jury
        ]

    def usage(self) -> dict[str, Any] | None:
        """The model calls and tokens so far; a jury's summed, each juror's under ``jurors``."""
        if not self.jury:
            return super().usage()
        from clinjudge.llm_usage import total_usage

        own = {j.name: a.caller.usage for j, a in self.jury if a.caller}
        return {
            **total_usage(own.values()).as_dict(),
            "jurors": {n: u.as_dict() for n, u in own.items()},
        }

    def criteria_of(self, item: Item) -> list[dict[str, Any]]:
        """The rubric's criteria, then the item's own (``criteria_column``).

        Raises:
            ConfigError: the item's criteria are malformed (one line: item, field, fix).
        """
        from clinjudge.rubric.loading import item_criteria

        own: tuple = ()
        if self.rubric.criteria_column:
            value = item.meta.get(self.rubric.criteria_column)
            own = item_criteria(self.rubric, value if value is not None else [], item.id)
        return [c.model_dump() for c in (*self.rubric.criteria, *own)]

    def missing(self, item: Item) -> str | None:
        """What the item lacks for this rubric: a column it reads, or criteria.

        Raises:
            ConfigError: the item's own criteria are malformed.
        """
        from clinjudge.rubric.model import READABLE

        for column in ("question", "reference note"):
            if column in self.rubric.reads and not _field(item, READABLE[column]):
                return f"{column} (a {', '.join(READABLE[column])} column)"
        if not self.criteria_of(item):
            return f"criteria (a JSON list in column {self.rubric.criteria_column!r})"
        return None

    def texts(self, item: Item) -> dict[str, str]:
        """What the grader reads of ``item``: the columns the rubric names, "" for others."""
        from clinjudge.rubric.model import READABLE

        return {
            "transcript": item.transcript if self.needs_source else "",
            "note": item.note,
            "question": _field(item, READABLE["question"]),
            "reference": _field(item, READABLE["reference note"]),
        }

    def planned_prompts(self, item: Item) -> tuple[list[str], str] | None:
        """The first ask of each batch of ``item``'s criteria (``compare --dry-run``), built
        as the graph builds them, with no call; ``None`` offline."""
        from clinjudge.graphs.rubric import JurorSeat

        seats = self._context.jury
        if self.caller is not None and self._context.prompt is not None:
            seats = [JurorSeat("", self.caller, self._context.prompt)]
        if not seats:
            return None
        from clinjudge.rubric.model import Criterion
        from clinjudge.rubric.replies import grades_schema, prompt_variables

        criteria = [Criterion.model_validate(c) for c in self.criteria_of(item)]
        if self._context.offline_facts:
            criteria = [c for c in criteria if not c.fact]
        size = self._context.batch
        batches = [criteria[lo : lo + size] for lo in range(0, len(criteria), size)]
        prompts = [
            seat.caller.rendered(
                seat.prompt,
                prompt_variables(self.rubric, batch, **self.texts(item)),
                grades_schema(self.rubric, batch),
            )
            for seat in seats
            for batch in batches
        ]
        every = ", each juror's" if len(seats) > 1 else ""
        return prompts, f"first asks{every}; a criterion a reply leaves out is asked again"

    async def evaluate(self, item: Item, given: list[dict] | None = None) -> dict[str, Any]:
        state = {"id": item.id, **self.texts(item), "criteria": self.criteria_of(item)}
        final = await self._graph.ainvoke(state, context=self._context)
        return {**final["row"], "retry": bool(final["row"]["failures"])}

    def score(self, row: dict[str, Any]) -> float | None:
        return row.get("score")

    def summarize(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        from clinjudge.rubric.aggregate import summarize

        return summarize(self.rubric, rows)

    def item_scores(self, row: dict[str, Any]) -> dict[str, Any]:
        keys = ("score", "raw_score", "mean_level", "gate_failed", "n_graded", "n_needs_model")
        return {k: row.get(k) for k in keys}

    def flagged_spans(self, row: dict[str, Any]) -> list[tuple[int, int]]:
        """Note spans of the errors found: negative criteria met, where the grader located one."""
        return [
            (c["note_span"][0], c["note_span"][1])
            for c in row.get("criteria") or []
            if c.get("met") and c["points"] < 0 and (c.get("note_span") or [-1])[0] >= 0
        ]

    def verdict_lines(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"id": row["id"], "judge": self.name, "criterion": c} for c in row["criteria"]]


def _field(item: Item, names: tuple[str, ...]) -> str:
    return next((str(item.meta[k]) for k in names if item.meta.get(k) not in (None, "")), "")


@judge(
    "rubric",
    summary="a judge from one rubric file: criteria met or 1-N levels, HealthBench score",
    argument="FILE",
    jury=True,
)
def build(options: BuildOptions) -> RubricEvaluator:
    from clinjudge.grounding.backend import (
        ModelAccess,
        knowledge_provenance,
        open_backend,
        open_jury,
    )
    from clinjudge.knowledge.base import KnowledgeBase
    from clinjudge.llm_settings import parse_jury
    from clinjudge.rubric.loading import load_rubric

    given = check_options("rubric", options.options, ("file", *OPTIONS))
    if not given.get("file"):
        raise ConfigError("judge 'rubric' needs a rubric file: --judges rubric:FILE")
    settings = rubric_settings(given)
    if options.jury and settings.get("offline_facts"):
        raise ConfigError(JURY_FACTS)
    rubric = load_rubric(str(given["file"]))
    prompt_name = f"rubric.grade_{rubric.mode}"
    opened = {
        "judge": "the rubric judge",
        "settings": options.settings,
        "cache": options.cache,
        "prompt_names": (prompt_name,),
        "prompt_overrides": options.prompt_overrides,
        "known_prompts": ("rubric.grade_met", "rubric.grade_scale"),
    }
    name = f"{PREFIX}{given['file']}"
    if options.jury:
        jury = open_jury(parse_jury(options.jury), options.backend, **opened)
        for _, seat in jury:
            _own_prompt(rubric, seat, prompt_name)
        provenance = {"package_version": jury[0][1].provenance["package_version"], "backend": "llm"}
        return RubricEvaluator(
            name, rubric, ModelAccess("llm", provenance), None, settings, jury=jury
        )
    access = open_backend(options.backend, chat_model=options.chat_model, **opened)
    _own_prompt(rubric, access, prompt_name)
    kb = None
    if settings.get("offline_facts", access.caller is None):
        kb = options.knowledge or KnowledgeBase.default()
        access.provenance["knowledge"] = knowledge_provenance(kb)
    return RubricEvaluator(name, rubric, access, kb, settings)


def rubric_settings(given: dict[str, Any]) -> dict[str, Any]:
    """The rubric judge's own ``--option`` settings (:data:`OPTIONS`), checked.

    Raises:
        ConfigError: a batch size that is not a whole number ≥ 1, an offline_facts that is not
            on or off.
    """
    out: dict[str, Any] = {}
    if "batch_size" in given:
        size = given["batch_size"]
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ConfigError(f"rubric.batch_size must be a whole number ≥ 1, got {size!r}")
        out["batch_size"] = size
    if "offline_facts" in given:
        value = str(given["offline_facts"]).strip().lower()
        if value not in SWITCH:
            raise ConfigError(
                f"rubric.offline_facts must be on or off, got {given['offline_facts']!r}"
            )
        out["offline_facts"] = SWITCH[value]
    return out


def _own_prompt(rubric: Rubric, access: ModelAccess, prompt_name: str) -> None:
    """The grader prompt the rubric brings, in place of the built-in one (on a model).

    Raises:
        ConfigError: the prompt file is not a valid prompt.
    """
    from clinjudge.prompts import load_prompt
    from clinjudge.rubric.loading import prompt_file

    own = prompt_file(rubric)
    if access.caller is None or own is None:
        return
    try:
        access.prompts = [load_prompt(prompt_name, own)]
    except ValueError as exc:
        raise ConfigError(f"rubric {rubric.path}: prompt: {exc}") from exc
    access.provenance["prompts"] = [p.ref().model_dump() for p in access.prompts]
