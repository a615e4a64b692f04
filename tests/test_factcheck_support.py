"""The prose-evidence support rule of the offline fact-checker (clinjudge.factcheck.support):
unsupported specifics (uncommon words, strength words, clinical concepts, numbers, named sources),
the count threshold, hedged inference, the support score, and the offline rater's use of them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from clinjudge.factcheck.models import FactClaim
from clinjudge.factcheck.rate import OfflineRater
from clinjudge.factcheck.support import (
    SupportRule,
    assess,
    novel_concepts,
    novel_numbers,
    novel_sources,
    novel_strength,
    novel_terms,
)
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.search import Passage

FIXTURES = Path(__file__).parent / "fixtures" / "factcheck"


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


def test_novel_terms_are_uncommon_words_the_evidence_never_uses():
    claim = "Proteases degrade calcium channels; the results of treatment in women were good."
    terms = novel_terms(claim, "A protease was measured in the leaves.")
    assert "calcium" in terms and "channels" in terms and "degrade" in terms
    assert "proteases" not in terms  # the evidence has the same stem
    assert not {"results", "treatment", "women"} & set(terms)  # common words never count


def test_discourse_words_are_never_novel_terms():
    claim = "Overall these findings suggest that selective screening is therefore warranted."
    terms = novel_terms(claim, "Screening detected 12 cancers.")
    assert terms == ["selective"]


def test_strength_words_the_evidence_does_not_state():
    claim = "Quilting sutures significantly reduce seroma and are essential, never optional."
    assert novel_strength(claim, "Seroma was less frequent with quilting sutures.") == [
        "significantly",
        "essential",
        "never",
    ]
    # the evidence states significance: "significant" shares the stem of "significantly"
    stated = "A significant reduction of seroma; sutures were essential and never optional."
    assert novel_strength(claim, stated) == []
    # strength words are their own class, not also counted as novel terms
    assert not {"significantly", "essential"} & set(novel_terms(claim, "Seroma."))


def test_one_strength_word_makes_an_otherwise_stated_claim_unsupported(kb):
    evidence = ["Telephone counseling increased mammography screening among women."]
    plain = assess("Telephone counseling increased screening.", evidence, kb)
    strong_claim = "Telephone counseling significantly increased screening."
    strong = assess(strong_claim, evidence, kb)
    assert plain.supported and not strong.supported
    assert strong.novel_strength == ["significantly"] and strong.score == pytest.approx(1 / 2)
    assert "strength the evidence does not state: significantly" in strong.rationale()
    off = assess(strong_claim, evidence, kb, SupportRule(strength_words=False))
    assert off.supported and off.novel_strength == []


def test_hedged_inference_tolerates_wording_but_not_specifics(kb):
    evidence = ["Telephone counseling increased mammography screening among nonadherent women."]
    wording = "counseling with leaflets, pamphlets, brochures and magnets increased screening"
    asserted = assess(f"Telephone {wording}.", evidence, kb)
    hedged = assess(f"Telephone {wording} may help.", evidence, kb)
    assert not asserted.supported and asserted.terms_counted
    assert hedged.supported and hedged.hedged and not hedged.terms_counted
    assert len(hedged.novel_terms) == 4 and hedged.score == 1.0  # listed, not counted
    assert "not counted: the claim is a hedged inference" in hedged.rationale()
    # a hedge does not excuse a number, a concept or a strength word the evidence lacks
    for claim in (
        "Telephone counseling may increase screening by 45%.",
        "Telephone counseling could prevent hypertension.",
        "Telephone counseling should be considered essential.",
    ):
        assert not assess(claim, evidence, kb).supported, claim
    strict = assess(
        f"Telephone {wording} may help.", evidence, kb, SupportRule(hedged_inference=False)
    )
    assert not strict.supported and strict.terms_counted


def test_novel_numbers_compare_values_and_keep_units():
    evidence = "In 20 percent of 1000 patients the dose was 75 to 100 mg."
    found = novel_numbers("Over 70% of 1,000 patients, 20% took 650 mg since 2020.", evidence)
    assert found == ["70%", "650 mg", "2020"]
    assert novel_numbers("20% of patients took 100 mg.", evidence) == []


def test_named_sources_the_evidence_lacks():
    claim = "A study published in the Journal of Orofacial Pain found this."
    assert novel_sources(claim, "A population based study of 4200 adults.") == [
        "published",
        "journal",
    ]
    assert novel_sources(claim, "Published in the journal of orofacial pain.") == []


def test_novel_concepts_compare_canonical_ids(kb):
    found = novel_concepts("Heart attack risk rises with hypertension.", ["MI was common."], kb)
    assert found == ["hypertension"]  # "heart attack" is the evidence's myocardial infarction
    assert novel_concepts("Heart attack is common.", ["Myocardial infarction is common."], kb) == []


def test_count_threshold_and_score(kb):
    evidence = ["Telephone counseling increased mammography screening among women."]
    three = "Telephone counseling with leaflets, pamphlets and brochures increased screening."
    four = (
        "Telephone counseling with leaflets, pamphlets, brochures and magnets increased screening."
    )
    low, high = assess(three, evidence, kb), assess(four, evidence, kb)
    assert low.novel_terms == ["leaflets", "pamphlets", "brochures"] and low.supported
    assert len(high.novel_terms) == 4 and not high.supported
    assert low.score == pytest.approx(1 / 4) and high.score == pytest.approx(1 / 5)
    assert assess(three, evidence, kb, SupportRule(max_novel_terms=3)).supported is False
    stated = assess("Telephone counseling increased screening.", evidence, kb)
    assert stated.supported and stated.score == 1.0


def test_one_novel_number_concept_or_source_is_enough(kb):
    evidence = ["Telephone counseling increased mammography screening among women."]
    for claim in (
        "Telephone counseling increased screening by 45%.",
        "Telephone counseling increased screening in women with hypertension.",
        "Researchers at Duke found telephone counseling increased screening.",
    ):
        support = assess(claim, evidence, kb)
        assert not support.supported, claim
        assert support.novel_numbers or support.novel_concepts or support.novel_sources


def test_medhallu_invented_mechanism_names_its_unsupported_specifics(kb):
    row = json.loads((FIXTURES / "medhallu_sample.jsonl").read_text().splitlines()[0])
    support = assess(row["Hallucinated Answer"], row["Knowledge"], kb)
    assert not support.supported
    assert {"calcium", "proteases"} <= set(support.novel_terms)
    assert "calcium channels" in support.novel_concepts
    assert "calcium channels" in support.rationale() and "not supported" in support.rationale()


def test_rater_keeps_score_rationale_and_cited_passage(kb):
    rater = OfflineRater(kb)
    passages = [
        Passage(id="p1", text="Metformin is the first-line drug for type 2 diabetes."),
        Passage(id="p2", text="Aspirin is used for secondary prevention of stroke."),
    ]
    text = "Metformin 850 mg is first-line."
    claim = FactClaim(id="c1", text=text, start=0, end=len(text), label="relevant")
    rating = asyncio.run(rater.rate(claim, passages))
    assert rating.verdict == "not_supported" and "850 mg" in rating.rationale
    assert rating.support_score == pytest.approx(0.5) and rating.cited == ["p1"]
    empty = asyncio.run(rater.rate(claim, []))
    assert empty.verdict == "not_supported" and empty.support_score == 0.0
