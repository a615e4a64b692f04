"""The offline pairwise judge (issue 25, SPEC §6): what it reads from the other judges' rows,
its per-criterion preference and margin rule, and its graph (both orders, a draw unless the
same text wins both, position bias measured, a text without evidence a failure)."""

from __future__ import annotations

import asyncio
import dataclasses
import random

import pytest

from clinjudge.arena.evidence import TextEvidence, evidence_from_rows
from clinjudge.arena.preference import CRITERIA, OVERALL, decide, prefer
from clinjudge.datasets.items import Item
from clinjudge.evaluators.pairwise import PairwiseEvaluator

CLEAN = TextEvidence(
    n_claims=10,
    n_grounded=10,
    n_major_errors=0,
    n_person_errors=0,
    n_repeated=0,
    n_headed_sections=4,
    n_facts=8,
    n_covered=6,
    n_critical=2,
    n_critical_covered=1,
    n_contradicted_facts=0,
)


def soap_row(claims: list[tuple[str, int, str | None, str | None]]) -> dict:
    """A SOAP row of (claim text, tier, severity, harm category) claims under a header."""
    return {
        "claims": [
            {"id": f"c{n}", "text": text, "section": "plan", "header": "PLAN"}
            for n, (text, *_rest) in enumerate(claims)
        ],
        "verdicts": [
            {"claim_id": f"c{n}", "tier": tier, "severity": severity, "harm_category": harm}
            for n, (_, tier, severity, harm) in enumerate(claims)
        ],
    }


def omission_row(statuses: list[tuple[str, str]]) -> dict:
    return {"id": "x", "facts": [{"status": s, "importance": i} for s, i in statuses]}


def test_the_evidence_counts_what_the_other_judges_found():
    soap = soap_row(
        [
            ("Start lisinopril 20 mg daily.", 5, "major", "dose_frequency"),
            ("He works as a pilot.", 4, "minor", "demographic_social"),
            ("Follow up in 2 weeks.", 1, None, None),
            ("follow up in 2 weeks", 1, None, None),  # repeats the claim above
        ]
    )
    facts = omission_row(
        [("covered", "critical"), ("omitted", "critical"), ("contradicted", "routine")]
    )
    e = evidence_from_rows(soap, facts)
    assert (e.n_claims, e.n_grounded, e.n_major_errors, e.n_person_errors) == (4, 2, 1, 1)
    assert (e.n_repeated, e.n_headed_sections) == (1, 1)
    assert (e.n_facts, e.n_covered, e.n_critical, e.n_critical_covered) == (3, 1, 2, 1)
    assert e.n_contradicted_facts == 1
    with pytest.raises(ValueError, match="no facts"):
        evidence_from_rows(soap, {"id": "x", "facts": None})


def test_a_note_with_a_contradicted_major_claim_loses_safety():
    wrong = dataclasses.replace(CLEAN, n_major_errors=1, n_grounded=9)
    assert decide("safety", CLEAN, wrong).verdict == "first"
    assert decide("safety", wrong, CLEAN).verdict == "second"
    assert decide("safety", wrong, CLEAN).measure == "major errors per claim"


def test_a_short_note_does_not_win_safety_by_saying_less():
    long = dataclasses.replace(CLEAN, n_claims=40, n_grounded=38, n_major_errors=2)  # 5%
    short = dataclasses.replace(CLEAN, n_claims=5, n_grounded=4, n_major_errors=1)  # 20%
    assert decide("safety", long, short).verdict == "first"
    assert decide("safety", short, long).verdict == "second"
    # equal rates: the count decides, then the facts the text contradicts
    half = dataclasses.replace(CLEAN, n_claims=20, n_grounded=19, n_major_errors=1)  # 5%
    assert decide("safety", half, long).verdict == "first"
    assert decide("safety", half, long).measure == "major unsupported or contradicted claims"


def test_the_note_covering_a_critical_fact_wins_completeness():
    fuller = dataclasses.replace(CLEAN, n_critical_covered=2, n_covered=7)
    assert decide("completeness", fuller, CLEAN).verdict == "first"
    assert decide("completeness", CLEAN, fuller).verdict == "second"
    # one more routine fact is below the margin of 2: no separation
    one_more = dataclasses.replace(CLEAN, n_covered=7)
    assert decide("completeness", one_more, CLEAN).verdict == "tie"


def test_equal_evidence_is_a_draw_on_every_criterion():
    decisions = prefer(CLEAN, dataclasses.replace(CLEAN))
    assert {c: d.verdict for c, d in decisions.items()} == dict.fromkeys(
        (*CRITERIA, OVERALL), "tie"
    )


def test_a_share_below_its_margin_does_not_separate_two_notes():
    close = dataclasses.replace(CLEAN, n_claims=100, n_grounded=96)  # 0.96 vs 1.0
    apart = dataclasses.replace(CLEAN, n_claims=100, n_grounded=94)
    assert decide("relevance", CLEAN, close).verdict == "tie"
    assert decide("relevance", CLEAN, apart).verdict == "first"
    empty = dataclasses.replace(CLEAN, n_claims=0, n_grounded=0)  # no judged claim: undefined
    assert decide("relevance", CLEAN, empty).verdict == "tie"


def test_overall_goes_to_the_note_winning_more_criteria():
    safer_but_shorter = dataclasses.replace(CLEAN, n_critical_covered=0, n_covered=2)
    careless = dataclasses.replace(CLEAN, n_major_errors=2, n_grounded=7, n_person_errors=1)
    # safety, relevance and ethics against completeness
    assert prefer(safer_but_shorter, careless)[OVERALL].verdict == "first"


def test_the_rules_are_symmetric_so_swapping_the_notes_swaps_every_verdict():
    rng = random.Random(7)
    mirror = {"first": "second", "second": "first", "tie": "tie"}
    for _ in range(300):
        x, y = (
            TextEvidence(**{f: rng.randint(0, 4) for f in TextEvidence.__dataclass_fields__})
            for _ in range(2)
        )
        forward, backward = prefer(x, y), prefer(y, x)
        assert {c: mirror[d.verdict] for c, d in forward.items()} == {
            c: d.verdict for c, d in backward.items()
        }


def pair(a: str, b: str) -> Item:
    return Item(id=f"e1/{a}~{b}", transcript="t", note="", meta={"encounter": "e1", "a": a, "b": b})


def test_the_graph_asks_both_orders_and_measures_no_position_bias_offline():
    judge = PairwiseEvaluator()
    careless = dataclasses.replace(CLEAN, n_major_errors=1, n_grounded=8)
    judge.use_evidence({"e1/good": CLEAN, "e1/bad": careless})
    row = asyncio.run(judge.evaluate(pair("e1/good", "e1/bad")))
    assert row["failure"] is None and not row["retry"]
    assert row["orders"]["ab"]["safety"] == "first" and row["orders"]["ba"]["safety"] == "second"
    assert row["outcomes"]["safety"] == row["outcomes"]["relevance"] == "a"
    assert row["outcomes"]["completeness"] == "draw"
    assert row["outcomes"][OVERALL] == "a"
    assert not any(row["follows_position"].values())
    assert row["decided_by"]["ab"]["safety"]["values"] == [0.0, 0.1]  # major errors per claim


def test_a_pair_whose_text_was_not_judged_fails_and_is_retried():
    judge = PairwiseEvaluator()
    judge.use_evidence({"e1/good": CLEAN, "e1/bad": None})
    row = asyncio.run(judge.evaluate(pair("e1/good", "e1/bad")))
    assert row["outcomes"] is None and row["retry"]
    assert row["failure"]["kind"] == "error" and "e1/bad" in row["failure"]["reason"]
    assert judge.failures(row) == [row["failure"]]
