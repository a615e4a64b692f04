"""What model calls cost: the counters of a caller (:class:`Usage`), the cost of one item
(:func:`with_cost`), totals over rows and money at the user's prices (:class:`Prices`).

Tokens are the server's own counts, read from LangChain's ``AIMessage.usage_metadata``:
``input_tokens`` (prompt), ``output_tokens`` (completion) and
``input_token_details["cache_read"]`` — the prompt tokens the server served from its prefix
cache (OpenAI's ``usage.prompt_tokens_details.cached_tokens``; prefixed ``priority_`` or
``flex_`` on those service tiers). A server that does not report them (llama-cpp-python 0.3,
vLLM without ``--enable-prompt-tokens-details``) counts 0 cached tokens.

Money (issue 38): with prices in USD per million tokens,

    usd = ((prompt − cached) · price_in + cached · price_cached + completion · price_out) / 10⁶

where ``price_cached`` is the input price unless one is given. No price is ever assumed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterable
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any

from clinjudge.errors import ConfigError

#: The per-item counters the running item's calls also count into (:func:`with_cost`).
_ITEM: ContextVar[Usage | None] = ContextVar("clinjudge_item_usage", default=None)

#: The fields of a row's ``cost`` and of every total.
COST_FIELDS = (
    "calls",
    "cache_hits",
    "prompt_tokens",
    "cached_prompt_tokens",
    "completion_tokens",
    "seconds",
)


@dataclass
class Usage:
    """Counters of one :class:`~clinjudge.llm.StructuredCaller`.

    ``calls`` counts model invocations actually sent (re-asks included, cache hits excluded); the
    openai SDK's own transport retries happen below it and are not visible here. Tokens come from
    ``AIMessage.usage_metadata`` of every reply received (module docstring). ``output_modes``:
    replies received per dialect of asking for JSON (:mod:`clinjudge.llm_dialects`), the record
    of how the server was asked. Every count also goes to the item being judged, when there is
    one (:func:`with_cost`).
    """

    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    parse_failures: int = 0
    errors: int = 0
    output_modes: dict[str, int] = field(default_factory=dict)

    def count(self, **deltas: int) -> None:
        """Add ``deltas`` to these counters and to the running item's."""
        for name, value in deltas.items():
            setattr(self, name, getattr(self, name) + value)
        item = _ITEM.get()
        if item is not None and item is not self:
            item.count(**deltas)

    def add_tokens(self, message: Any) -> None:
        meta = getattr(message, "usage_metadata", None) or {}
        self.count(
            input_tokens=int(meta.get("input_tokens", 0) or 0),
            cached_input_tokens=cached_tokens(message),
            output_tokens=int(meta.get("output_tokens", 0) or 0),
        )

    def replied(self, mode: str) -> None:
        self.output_modes[mode] = self.output_modes.get(mode, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def item_cost(self, seconds: float) -> dict[str, Any]:
        """A row's ``cost``: these counts under the names of :data:`COST_FIELDS`."""
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "prompt_tokens": self.input_tokens,
            "cached_prompt_tokens": self.cached_input_tokens,
            "completion_tokens": self.output_tokens,
            "seconds": round(seconds, 3),
        }


def total_usage(usages: Iterable[Usage]) -> Usage:
    """The counters of several callers added up (a jury's jurors)."""
    out = Usage()
    for u in usages:
        for name, value in u.as_dict().items():
            if name == "output_modes":
                for mode, n in value.items():
                    out.output_modes[mode] = out.output_modes.get(mode, 0) + n
            else:
                setattr(out, name, getattr(out, name) + value)
    return out


def cached_tokens(message: Any) -> int:
    """Prompt tokens the server read from its cache, as LangChain exposes them: the
    ``cache_read`` entries of ``usage_metadata["input_token_details"]`` (any service-tier
    prefix), else ``prompt_tokens_details.cached_tokens`` of the raw ``token_usage``."""
    meta = getattr(message, "usage_metadata", None) or {}
    details = meta.get("input_token_details") or {}
    found = [int(v or 0) for k, v in details.items() if k.endswith("cache_read")]
    if found:
        return sum(found)
    raw = (getattr(message, "response_metadata", None) or {}).get("token_usage") or {}
    return int(((raw.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0)


async def with_cost(judge_item: Callable[[], Awaitable[dict]]) -> dict:
    """The row ``judge_item()`` makes, with its ``cost`` (:data:`COST_FIELDS`): the model calls,
    cache hits and tokens of every caller it used, and its wall seconds. A row that already
    holds a ``cost`` (measured where it was judged, a worker) keeps it."""
    usage = Usage()
    token = _ITEM.set(usage)
    started = time.perf_counter()
    try:
        row = await judge_item()
    finally:
        _ITEM.reset(token)
    if "cost" in row:
        return row
    return {**row, "cost": usage.item_cost(time.perf_counter() - started)}


def cost_totals(rows: Iterable[dict]) -> dict[str, Any]:
    """The sum of the rows' ``cost`` over ``items`` rows; ``items_without_cost`` counts rows
    written before costs were recorded (their calls are unknown)."""
    totals: dict[str, Any] = dict.fromkeys(COST_FIELDS, 0)
    totals["seconds"] = 0.0
    items = unknown = 0
    for row in rows:
        items += 1
        cost = row.get("cost")
        if not isinstance(cost, dict):
            unknown += 1
            continue
        for name in COST_FIELDS:
            totals[name] += cost.get(name) or 0
    totals["seconds"] = round(totals["seconds"], 3)
    return {**totals, "items": items, "items_without_cost": unknown}


#: The environment variables of the prices (USD per million tokens).
PRICE_ENV = {
    "input": "CLINJUDGE_PRICE_IN",
    "output": "CLINJUDGE_PRICE_OUT",
    "cached_input": "CLINJUDGE_PRICE_CACHED",
}


@dataclass(frozen=True)
class Prices:
    """USD per million tokens: prompt (``input``), completion (``output``) and cached prompt
    tokens (``cached_input``, default the input price)."""

    input: float
    output: float
    cached_input: float | None = None

    @classmethod
    def given(
        cls, price_in: str | None, price_out: str | None, price_cached: str | None
    ) -> Prices | None:
        """The prices of the options, else of the environment (:data:`PRICE_ENV`); ``None``
        when neither names any.

        Raises:
            ConfigError: a price that is not a number ≥ 0, or only one of input and output.
        """
        named = {
            "input": ("--price-in", price_in),
            "output": ("--price-out", price_out),
            "cached_input": ("--price-cached", price_cached),
        }
        values: dict[str, float] = {}
        for key, (option, text) in named.items():
            if text is None and os.environ.get(PRICE_ENV[key], "").strip():
                option, text = PRICE_ENV[key], os.environ[PRICE_ENV[key]]
            if text is not None:
                values[key] = _price(text, option)
        if not values:
            return None
        if "input" not in values or "output" not in values:
            raise ConfigError(
                "prices need both --price-in and --price-out (USD per million tokens; or "
                "CLINJUDGE_PRICE_IN and CLINJUDGE_PRICE_OUT)"
            )
        return cls(values["input"], values["output"], values.get("cached_input"))

    def usd(self, totals: dict[str, Any]) -> float:
        """What ``totals`` (:func:`cost_totals`) cost (module docstring)."""
        cached = totals.get("cached_prompt_tokens") or 0
        fresh = (totals.get("prompt_tokens") or 0) - cached
        cached_price = self.input if self.cached_input is None else self.cached_input
        completion = totals.get("completion_tokens") or 0
        return (fresh * self.input + cached * cached_price + completion * self.output) / 1e6

    def as_dict(self) -> dict[str, Any]:
        return {
            "currency": "USD",
            "per": "1M tokens",
            "input": self.input,
            "cached_input": self.input if self.cached_input is None else self.cached_input,
            "output": self.output,
        }


def _price(text: str, option: str) -> float:
    try:
        value = float(str(text).strip())
    except ValueError:
        value = float("nan")
    if not value >= 0 or value == float("inf"):
        raise ConfigError(
            f"{option} must be a price in USD per million tokens, a number ≥ 0 (got {text!r})"
        )
    return value


def priced(totals: dict[str, Any], prices: Prices | None) -> dict[str, Any]:
    """``totals`` with ``usd`` when there are prices."""
    return totals if prices is None else {**totals, "usd": round(prices.usd(totals), 6)}


def cost_report(
    rows: dict[str, list[dict]], system_of: dict[str, str], prices: Prices | None
) -> dict[str, Any]:
    """``report.json``'s ``cost``: totals per judge (:func:`cost_totals`, with ``usd`` when
    priced) and over every judge, per judge and system when the items come from several
    (``system_of``: item id → system), and the prices used (``None``: tokens only)."""
    judges = {name: priced(cost_totals(judge_rows), prices) for name, judge_rows in rows.items()}
    every = [row for judge_rows in rows.values() for row in judge_rows]
    report: dict[str, Any] = {
        "judges": judges,
        "total": priced(cost_totals(every), prices),
        "prices": None if prices is None else prices.as_dict(),
    }
    systems = list(dict.fromkeys(system_of.values()))
    if len(systems) > 1:
        report["systems"] = {
            name: {
                s: priced(cost_totals(r for r in judge_rows if system_of.get(r["id"]) == s), prices)
                for s in systems
            }
            for name, judge_rows in rows.items()
        }
    return report
