"""Who said what (issue 36): the visit read by voice, and claims that give the patient words
only the clinician said. Synthetic visits, in both of ACI-Bench's transcript styles (spaced
punctuation, and none at all)."""

from __future__ import annotations

import pytest

from clinjudge.grounding.visit_reading import VisitReading
from clinjudge.judges.attribution import misattributed, reported_part
from clinjudge.text.transcript import parse_transcript

PUNCTUATED = """[doctor] hi , how are you doing ?
[patient] i'm okay . my knees have been aching for about two weeks .
[doctor] any swelling ?
[patient] yes , a little in the left one .
[doctor] okay . and you have been taking ibuprofen ?
[patient] yeah , twice a day .
[doctor] okay . so , on exam , i do hear a soft systolic murmur , and your lungs are clear .
[doctor] i think this is osteoarthritis of both knees .
[doctor] i want you to start physical therapy and keep a walking log every day .
[patient] okay .
[doctor] you're doing a great job keeping your weight down .
"""

RUN_ON = "\n".join(
    [
        "[doctor] hey john so i see that you've been having some back pain for a while could "
        "you tell me about it",
        "[patient] yeah it started after i lifted a couch about a month ago",
        "[doctor] okay and are you still taking the naproxen twice a day",
        "[patient] yes",
        "[doctor] alright so it looks like what you have is a lumbar strain from the lifting so "
        "what i'm gon na do is i'll order physical therapy",
        "[patient] okay",
    ]
)


def reading(text: str) -> VisitReading:
    return VisitReading(parse_transcript(text))


def voices(text: str) -> list[tuple[str, str]]:
    return [(s.voice, s.text.strip()) for s in reading(text).stretches if s.text.strip()]


def test_the_clinicians_own_voice_questions_and_the_patients_turns_are_told_apart():
    found = voices(PUNCTUATED)
    assert ("asked", "any swelling ?") in found
    assert ("patient", "yes , a little in the left one .") in found
    own = [text for voice, text in found if voice == "own"]
    assert any(text.startswith("on exam , i do hear a soft systolic murmur") for text in own)
    assert "i think this is osteoarthritis of both knees ." in own
    assert any(text.startswith("i want you to start physical therapy") for text in own)
    assert any(text.startswith("you're doing a great job") for text in own)


def test_a_question_answered_yes_is_on_the_patients_side():
    r = reading(PUNCTUATED)
    answered = [s.text for s in r.stretches if s.voice == "asked" and s.answered]
    assert "any swelling ?" in answered
    assert "and you have been taking ibuprofen ?" in answered
    assert "hi , how are you doing ?" not in answered  # "i'm okay" is no yes


def test_run_on_turns_are_cut_at_the_cues_of_a_voice():
    r = reading(RUN_ON)
    asked = [s.text.strip() for s in r.stretches if s.voice == "asked"]
    assert any(a.startswith("are you still taking the naproxen") for a in asked)
    own = [s.text.strip() for s in r.stretches if s.voice == "own"]
    assert any(o.startswith("it looks like what you have is a lumbar strain") for o in own)
    # the chart read aloud ("i see that you've been …") is relayed, not the clinician's opinion
    assert not any("back pain for a while" in o for o in own)


@pytest.mark.parametrize(
    ("claim", "reported"),
    [
        (
            "He believes that his symptoms are due to arthritis.",
            "his symptoms are due to arthritis.",
        ),
        ("The patient reports knee pain.", "knee pain."),
        ("Mr. Smith states that he walks daily.", "he walks daily."),
        ("She does hear a murmur.", "a murmur."),
        ("Knee pain for two weeks.", None),
        ("Exam shows a murmur.", None),
    ],
)
def test_patient_voiced_claims_and_what_they_report(claim, reported):
    assert reported_part(claim) == reported


@pytest.mark.parametrize(
    ("claim", "quoted"),
    [
        ("He does hear a soft systolic murmur.", "i do hear a soft systolic murmur"),
        ("She believes that this is osteoarthritis of both knees.", "osteoarthritis of both knees"),
        ("He notes that he is doing a great job keeping his weight down.", "great job"),
        ("She states that she keeps a walking log every day.", "walking log"),
    ],
)
def test_the_clinicians_words_given_to_the_patient_are_contradicted_naming_the_doctor(
    claim, quoted
):
    why = misattributed(claim, reading(PUNCTUATED))
    assert why is not None and why.startswith("the doctor, not the patient, said this:")
    assert quoted in why


@pytest.mark.parametrize(
    "claim",
    [
        "The patient reports that her knees have been aching for about two weeks.",
        "She reports some swelling in the left knee.",  # a question she answered yes
        "She states that she takes ibuprofen twice a day.",
        "The patient believes her knees ache.",
        "She notes a walk.",  # too little to read
    ],
)
def test_what_the_patient_said_or_affirmed_stays_hers(claim):
    assert misattributed(claim, reading(PUNCTUATED)) is None


def test_run_on_transcripts_relayed_history_and_answered_questions_stay_the_patients():
    r = reading(RUN_ON)
    assert misattributed("He reports back pain for a while.", r) is None
    assert misattributed("He states he is still taking naproxen twice a day.", r) is None
    why = misattributed("He believes that he has a lumbar strain from the lifting.", r)
    assert why is not None and "lumbar strain" in why


def test_an_untagged_transcript_says_nothing_of_speakers():
    plain = "any swelling?\n\nyes.\n\ni do hear a soft systolic murmur."
    assert misattributed("He does hear a soft systolic murmur.", reading(plain)) is None


def test_a_side_the_visit_corrects_is_contradicted_by_the_correction():
    from clinjudge.grounding.transcript_facts import build_transcript_facts
    from clinjudge.judges.offline_rules import laterality_contradiction
    from clinjudge.knowledge.base import KnowledgeBase

    visit = (
        "[doctor] so the pain is in your right elbow ?\n"
        "[patient] yes .\n"
        "[doctor] okay .\n"
        "[patient] oh , sorry , actually it's my left elbow , not the right .\n"
    )
    facts = build_transcript_facts(parse_transcript(visit), KnowledgeBase.default(), dense=False)
    why = laterality_contradiction("Right elbow pain.", facts, [])
    assert why is not None and why.startswith("the visit corrects 'right' to 'left'")
    assert laterality_contradiction("Left elbow pain.", facts, []) is None
    uncorrected = visit.replace(
        "oh , sorry , actually it's my left elbow , not the right", "my left elbow hurts too"
    )
    facts = build_transcript_facts(
        parse_transcript(uncorrected), KnowledgeBase.default(), dense=False
    )
    assert laterality_contradiction("Right elbow pain.", facts, []) is None


def test_the_judge_leaves_attribution_off_unless_asked():
    """Off by default: on the sealed encounters the rule added two false contradictions and
    no true one (issue 36); ``attribution=True`` turns it on."""
    from clinjudge.api import judge_note, make_setup
    from clinjudge.judges.offline import OfflineConfig, OfflineVerifier

    note = "He does hear a soft systolic murmur.\nHis knees have been aching for two weeks."

    def tiers(setup=None) -> dict[str, int]:
        result = judge_note(PUNCTUATED, note, backend="offline", setup=setup)
        return {row["text"]: row["tier"] for row in result.rows()}

    default = tiers()
    assert default["He does hear a soft systolic murmur."] < 5
    setup = make_setup("inference-aware", "offline")
    setup.verifier = OfflineVerifier(
        "inference-aware", setup.verifier.kb, OfflineConfig(attribution=True)
    )
    asked = tiers(setup)
    assert asked["He does hear a soft systolic murmur."] == 5
    assert (
        asked["His knees have been aching for two weeks."]
        == default["His knees have been aching for two weeks."]
    )


def test_attribution_is_a_judge_option_recorded_in_the_run():
    from clinjudge.errors import ConfigError
    from clinjudge.evaluators import BuildOptions, build_evaluator
    from clinjudge.knowledge.base import KnowledgeBase

    kb = KnowledgeBase.default()

    def built(value):
        options = BuildOptions(backend="offline", knowledge=kb, options={"attribution": value})
        return build_evaluator("inference-aware", options)

    assert built("true").identity()["verifier"]["config"]["attribution"] is True
    assert built(False).identity()["verifier"]["config"]["attribution"] is False
    with pytest.raises(ConfigError, match="attribution must be true or false"):
        built("maybe")


SHOULDER = """[doctor] what's going on with your shoulder ?
[patient] my right shoulder has been hurting since i fell .
[doctor] okay . on exam , there's tenderness over the right shoulder and a small bruise .
[patient] okay .
"""


def test_a_finding_only_the_clinician_names_is_misattributed_though_the_patient_named_the_site():
    """By finding: the patient said "right shoulder", only the doctor said "tenderness"."""
    r = reading(SHOULDER)
    claim = "She reports tenderness over the right shoulder."
    assert misattributed(claim, r) is None  # by words: half of them are the patient's
    why = misattributed(claim, r, frozenset({"tender"}))
    assert why is not None and "tenderness over the right shoulder" in why
    told = SHOULDER.replace("has been hurting since i fell", "is tender since i fell")
    assert misattributed(claim, reading(told), frozenset({"tender"})) is None  # she said it


def test_an_examination_dictated_sentence_by_sentence_stays_in_the_clinicians_voice():
    exam = (
        "[patient] my right shoulder hurts .\n"
        "[doctor] okay . on physical examination , your lungs are clear . there is tenderness "
        "over the right shoulder . range of motion is decreased . does that hurt ?\n"
        "[patient] yes .\n"
        "[doctor] you told me it started last week . it got worse yesterday .\n"
    )
    said = voices(exam)
    own = " ".join(t for v, t in said if v == "own")
    assert "tenderness over the right shoulder" in own and "range of motion" in own
    relayed = " ".join(t for v, t in said if v == "relayed")
    assert "it got worse yesterday" in relayed  # a new turn: no exam goes on


def test_a_false_flag_of_attribution_or_correction_is_counted_under_its_own_kind():
    from clinjudge.metrics.disagreements import FLAG_KINDS, kind_of

    why = misattributed(
        "She reports tenderness over the right shoulder.", reading(SHOULDER), frozenset({"tender"})
    )
    assert kind_of(why, FLAG_KINDS, "other").startswith("speaker")
    assert kind_of("the visit corrects 'right' to 'left': \"…\"", FLAG_KINDS, "other").startswith(
        "corrected"
    )
