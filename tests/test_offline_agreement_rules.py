"""What the offline verifier learned from sentence labels (issue 12): examinations nobody voiced,
names the visit never says, ASR spellings, lay phrasing, review-of-systems questions, numbers
that are names, plan items by habit, and the combiner that weighs the measurements."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinjudge.api import judge_note, make_setup
from clinjudge.grounding.exam_systems import claim_systems, voiced_systems
from clinjudge.grounding.plan_items import plan_kinds, voiced_plan_kinds
from clinjudge.grounding.transcript_facts import build_transcript_facts
from clinjudge.judges.claim_features import FEATURES, capitalised_names, documentation_rates
from clinjudge.judges.combiner import Combiner, default_combiner
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.claims import is_label_only, split_claims
from clinjudge.text.negation import is_negated
from clinjudge.text.normalize import stem
from clinjudge.text.quantities import extract_quantities
from clinjudge.text.transcript import parse_transcript

FIXTURES = Path(__file__).parent / "fixtures" / "soap"
TRANSCRIPT = (FIXTURES / "transcript.txt").read_text()
EXAM = TRANSCRIPT + "[doctor] your lungs sound nice and clear .\n"


@pytest.fixture(scope="module")
def setups():
    return {m: make_setup(m, "offline") for m in ("lexical", "inference-aware")}


def verdict(
    setups,
    sentence: str,
    *,
    section: str = "PHYSICAL EXAM",
    transcript=TRANSCRIPT,
    mode: str = "inference-aware",
):
    result = judge_note(transcript, f"{section}\n\n{sentence}\n", setup=setups[mode])
    assert len(result.report.verdicts) == 1, result.report
    return result.report.verdicts[0]


# -- examinations --------------------------------------------------------------------------------
def test_exam_systems_of_claims_and_of_the_visit():
    assert claim_systems("Neck supple without thyromegaly.") == ["head and neck"]
    assert claim_systems("No wheezes, rales, or rhonchi.") == ["lungs"]
    assert claim_systems("Vital signs are within normal limits.") == ["vital signs"]
    said = ["let me listen to your heart .", "your lungs sound nice and clear ."]
    assert voiced_systems(said) == {"lungs"}  # the intention to listen voices nothing
    assert voiced_systems(["normal physical exam per my template ."]) >= {"heart", "abdomen"}


def test_normal_exam_of_a_voiced_system_is_an_abstraction(setups):
    v = verdict(
        setups, "Lungs clear to auscultation bilaterally, no wheezes or rhonchi.", transcript=EXAM
    )
    assert v.supported, v


def test_normal_exam_nobody_voiced_is_fabricated(setups):
    v = verdict(setups, "Abdomen soft, nontender, no organomegaly.", transcript=EXAM)
    assert v.tier == 4 and "abdomen" in v.rationale, v


# -- names, numbers, headings --------------------------------------------------------------------
def test_capitalised_words_inside_a_sentence_are_name_candidates():
    text = "Joyce Price is a 50-year-old female. Mr. Moore reports COPD."
    spans = [text[s:e] for s, e in capitalised_names(text, [])]
    assert spans == ["Price", "Moore"]  # sentence openers are grammar, "Mr." opens a name


def test_a_surname_the_visit_never_says_is_flagged(setups):
    v = verdict(
        setups,
        "Mr. Lee Harrington reports right knee pain for 2 weeks.",
        section="HISTORY OF PRESENT ILLNESS",
    )
    assert v.tier == 4 and "Harrington" in v.rationale, v
    ok = verdict(
        setups, "Mr. Lee reports right knee pain for 2 weeks.", section="HISTORY OF PRESENT ILLNESS"
    )
    assert ok.supported, ok


def test_numbers_that_are_part_of_a_name_are_not_values(setups):
    transcript = TRANSCRIPT + "[doctor] and your diabetes , the type two , is fine .\n"
    v = verdict(
        setups, "Diabetes mellitus type 2, stable.", section="ASSESSMENT", transcript=transcript
    )
    assert v.supported, v


def test_body_system_subheadings_are_not_claims():
    assert is_label_only("Hematology/Lymphatic/Immunology")
    assert is_label_only("Ears, Nose, Mouth and Throat:")
    assert not is_label_only("Hypertension")


# -- speech recognition and everyday words --------------------------------------------------------
def test_drug_names_as_speech_recognition_spells_them(setups):
    transcript = TRANSCRIPT + "[doctor] keep taking your asprin every day .\n"
    v = verdict(setups, "Continue aspirin.", section="PLAN", transcript=transcript)
    assert v.supported, v
    never_said = verdict(setups, "Continue aspirin.", section="PLAN")  # not in the visit at all
    assert never_said.tier == 4 and "aspirin" in never_said.rationale, never_said
    facts = build_transcript_facts(parse_transcript(transcript), KnowledgeBase.default())
    assert facts.says(stem("aspirine")) and not facts.says(stem("asperrin"))  # one edit, not two


def test_spoken_decimals_are_values_the_visit_states(setups):
    transcript = TRANSCRIPT + "[doctor] your temperature is ninety eight . six today .\n"
    v = verdict(setups, "Temperature 98.6.", transcript=transcript)
    assert v.supported, v


def test_dose_per_day_is_a_once_daily_frequency():
    (dose, freq) = extract_quantities("1,000 milligrams a day")
    assert (dose.kind, dose.value) == ("dose", 1000.0)
    assert (freq.kind, freq.value, freq.unit) == ("frequency", 1.0, "per_day")
    assert [q.kind for q in extract_quantities("two cups a day")] == ["other"]


def test_lay_phrase_said_with_other_words_between(setups):
    transcript = TRANSCRIPT + "[doctor] any blood in your stool ?\n[patient] no .\n"
    v = verdict(setups, "Denies hematochezia.", section="REVIEW OF SYSTEMS", transcript=transcript)
    assert v.supported and v.tier == 2, v


def test_nutrients_and_analytes_are_not_medications(setups):
    v = verdict(setups, "Continues to limit sodium intake.", section="PLAN")
    assert "medication" not in v.rationale


def test_negation_stops_at_a_new_positive_clause():
    s = "no lower extremity edema , you have healed surgical scars on the right wrist ."
    assert is_negated(s, s.index("edema"), s.index("edema") + 5)
    assert not is_negated(s, s.index("scars"), s.index("scars") + 5)


def test_a_review_of_systems_list_is_a_question_answered_next(setups):
    transcript = (
        "[doctor] chest pain , shortness of breath , belly pain-\n[patient] no , none of that .\n"
        "[doctor] and your knee ?\n[patient] it hurts .\n"
    )
    v = verdict(setups, "Denies chest pain.", section="REVIEW OF SYSTEMS", transcript=transcript)
    assert v.tier != 5, v  # the clinician listed them; the patient denied them


def test_a_statement_before_the_question_keeps_its_status(setups):
    transcript = (
        "[doctor] you have normal range of motion so that's good any pain down your legs\n"
        "[patient] no .\n"
    )
    v = verdict(setups, "Normal range of motion.", transcript=transcript)
    assert v.tier != 5, v


# -- plan items -------------------------------------------------------------------------------
def test_plan_kinds_of_note_and_visit():
    assert plan_kinds("Follow up in 4 weeks and call with any concerns.") == [
        "follow-up",
        "contact",
    ]
    assert voiced_plan_kinds(["i'll see you back in a month ."]) == {"follow-up"}
    assert voiced_plan_kinds(["okay , sounds good ."]) == set()


# -- the combiner ------------------------------------------------------------------------------
def test_packaged_combiner_matches_the_features_and_is_deterministic():
    combiner = default_combiner()
    assert combiner is not None and combiner.features == FEATURES
    values = {"coverage": 0.2, "cosine": 0.3, "novel_fact": 3.0, "novel_specificity": 1.0}
    values["pair"] = 0.9
    p = combiner.probability(values)
    assert 0.0 < p < 1.0 and p == combiner.probability(values)
    stated = {"coverage": 1.0, "coverage_anywhere": 1.0, "cosine": 0.9, "local_coverage": 1.0}
    stated["pair"] = 0.1
    assert combiner.probability(stated) < combiner.threshold < p


def test_combiner_file_for_other_features_is_refused(tmp_path):
    bad = tmp_path / "c.json"
    bad.write_text(
        '{"features": ["x"], "mean": [0], "scale": [1], "coef": [1], '
        '"intercept": 0, "threshold": 0.5}'
    )
    with pytest.raises(ValueError, match="refit"):
        Combiner.from_file(bad)


# -- the pair scorer ---------------------------------------------------------------------------
def test_pair_scorer_round_trips_and_scores_alike_alone_or_in_a_batch(tmp_path):
    from clinjudge.judges.pair_model import PairScorer

    fresh = PairScorer.untrained()
    fresh.save(tmp_path, {"fitted": "test"})
    loaded = PairScorer.load(tmp_path)
    pairs = [
        ("Denies chest pain.", "any chest pain ? | no ."),
        ("Started on warfarin 5 mg daily for atrial fibrillation.", "my knee hurts | okay ."),
    ]
    fresh.encoder.eval()
    batch = loaded.scores(pairs)
    assert batch == pytest.approx(fresh.scores(pairs), abs=1e-5)  # adapter merged on load
    assert batch[1] == pytest.approx(loaded.scores(pairs[1:])[0], abs=1e-5)  # padding-free
    assert loaded.digest and loaded.digest == PairScorer.load(tmp_path).digest


def test_packaged_pair_scorer_reads_a_claim_against_its_evidence():
    from clinjudge.judges.pair_model import default_pair_scorer

    scorer = default_pair_scorer()
    assert scorer is not None, "the package ships the pair scorer (data/pair_model/)"
    evidence = "[patient] i've had this cough for about three days now . | [doctor] okay ."
    said, invented = scorer.scores(
        [
            ("She reports a cough for three days.", evidence),
            ("She was started on warfarin 5 mg daily after her stroke.", evidence),
        ]
    )
    assert 0.0 < said < invented < 1.0, (said, invented)


def test_pair_memo_reads_each_distinct_pair_once_and_scores_as_the_scorer():
    from clinjudge.judges.pair_model import PairScoreMemo, default_pair_scorer

    scorer = default_pair_scorer()
    read: list[tuple[str, str]] = []

    class Counting:
        def scores(self, pairs):
            read.extend(pairs)
            return scorer.scores(pairs)

    memo = PairScoreMemo(Counting(), size=3)  # type: ignore[arg-type]
    evidence = "[patient] i've had this cough for about three days now ."
    pairs = [(f"She reports a cough for {n} days.", evidence) for n in ("three", "two", "three")]
    first = memo.scores(pairs)
    assert first == pytest.approx(scorer.scores(pairs), abs=1e-5)
    assert first[0] == first[2] and len(read) == 2  # the repeated pair is read once
    assert memo.scores(pairs[:1]) == first[:1] and len(read) == 2  # and not again later
    memo.scores([(f"claim {i}", evidence) for i in range(5)])
    assert len(memo._held) == 3  # bounded: the oldest pairs are forgotten


def test_documentation_vocabulary_separates_wording_from_facts():
    rates = documentation_rates()
    assert rates["report"] > 0.9 and rates["knee"] < 0.1


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("[patient] they took my appendix out when i was a kid .", "Appendectomy in childhood."),
        ("[patient] i had a nose job years ago .", "Rhinoplasty."),
        ("[doctor] there's a little fluid in the knee .", "Mild effusion of the knee."),
        ("[doctor] your ekg is normal .", "EKG normal."),
        ("[doctor] we'll get an x-ray of your wrist .", "XR wrist."),
        ("[doctor] i want you to come back in about a week .", "Follow up in 1 week."),
    ],
)
def test_what_reviewers_accept_is_not_flagged(setups, said, written):
    v = verdict(setups, written, section="ASSESSMENT AND PLAN", transcript=said + "\n")
    assert v.supported, v


def test_a_referral_the_visit_never_made_is_fabricated(setups):
    v = verdict(setups, "Referred to podiatry for nail care.", section="PLAN")
    assert v.tier == 4 and "podiatry" in v.rationale, v
    said = TRANSCRIPT + "[doctor] i'm going to send you to a foot doctor for your nails .\n"
    assert verdict(
        setups, "Referred to podiatry for nail care.", section="PLAN", transcript=said
    ).supported


def test_imaging_of_a_site_the_visit_never_imaged_is_a_contradiction(setups):
    v = verdict(setups, "X-ray of the right ankle was ordered.", section="PLAN")
    assert v.tier == 5 and "knee" in v.rationale, v
    ok = verdict(setups, "X-ray of the right knee was ordered.", section="PLAN")
    assert ok.supported, ok


# -- denials the answers do not give ---------------------------------------------------------------
_ASKED = "[doctor] and have you had any chest pain or shortness of breath ?\n[patient] {answer}\n"


@pytest.mark.parametrize(
    ("answer", "contradicted"),
    [
        ("sometimes a little heaviness in my chest .", True),
        ("yes , definitely some chest pain when i walk .", True),
        ("no , none of that .", False),
        ("nope .", False),
        (
            "yeah i wondered , but i have n't actually had any chest pain or shortness of breath .",
            False,
        ),
        ("i have a little bit of nasal congestion from my allergies .", False),  # another finding
        ("well it's hard to say .", False),  # no answer either way
    ],
)
def test_a_denial_is_read_against_the_answer_to_the_question(setups, answer, contradicted):
    transcript = _ASKED.format(answer=answer)
    v = verdict(
        setups,
        "He denies any chest pain or shortness of breath.",
        section="HISTORY OF PRESENT ILLNESS",
        transcript=transcript,
    )
    assert (v.tier == 5) is contradicted, v
    if answer.startswith("sometimes"):  # read from the answer (no finding of the question named)
        assert "asked" in v.rationale and "heaviness" in v.rationale, v


def test_an_answered_yes_decides_nothing_in_the_plan(setups):
    transcript = _ASKED.format(answer="sometimes a little heaviness in my chest .")
    v = verdict(
        setups,
        "No chest pain or shortness of breath is expected after the procedure.",
        section="PLAN",
        transcript=transcript,
    )
    assert v.tier != 5, v


def test_the_pair_scorer_is_skipped_only_where_it_cannot_change_the_decision(monkeypatch):
    import asyncio

    from clinjudge.grounding.note_input import NoteInput
    from clinjudge.judges.combiner import Combiner
    from clinjudge.judges.offline import OfflineVerifier

    text = (FIXTURES / "note.txt").read_text()
    note = NoteInput(TRANSCRIPT, text)
    claims = split_claims(note.note)
    verifier = OfflineVerifier("inference-aware", KnowledgeBase.default())
    skipped = asyncio.run(verifier.assess_claims(claims, note))
    monkeypatch.setattr(Combiner, "undecided_by", lambda self, values, feature: None)
    scored = asyncio.run(verifier.assess_claims(claims, NoteInput(TRANSCRIPT, text)))
    assert any(a.pair_unread for a in skipped) and not any(a.pair_unread for a in scored)
    assert [verifier.decide(a).tier for a in skipped] == [verifier.decide(a).tier for a in scored]
    for a, b in zip(skipped, scored, strict=True):
        if a.pair_unread:  # the printed score bounds the one the scorer would have given
            p, q = (verifier._combiner.probability(x.features) for x in (a, b))
            assert (p <= q) if verifier.decide(a).supported is False else (p >= q), (p, q)
