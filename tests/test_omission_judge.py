"""The omission judge (SPEC §9 "Omissions"): the visit's facts read from the transcript, each
note's coverage of them, the rates with their intervals, a compare run, and the LLM path over
HTTP with replies that cannot be parsed."""

from __future__ import annotations

import asyncio
import json

import pytest
from openai_stub import Reply, sequence

from clinjudge.compare import run_compare_sync
from clinjudge.datasets import load_items
from clinjudge.datasets.items import Item
from clinjudge.evaluators import BuildOptions, build_evaluator
from clinjudge.grounding.transcript_facts import build_transcript_facts
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import LLMSettings
from clinjudge.omissions.coverage import check_facts
from clinjudge.omissions.visit_facts import visit_facts
from clinjudge.text.transcript import parse_transcript

VISIT = """[doctor] what brings you in today ?
[patient] i've had chest pain for two days , and some nausea .
[doctor] any fever ?
[patient] no .
[doctor] any allergies to medications ?
[patient] yes , i'm allergic to penicillin .
[doctor] what do you take ?
[patient] i take zestril 10 milligrams once a day .
[doctor] the most common side effects are dizziness and cough .
[doctor] your ekg shows elevated st segments .
[doctor] your blood pressure today is 150/95 .
[doctor] call us or go to the emergency room if the chest pain gets worse .
[doctor] i'll see you back in two weeks .
"""

COMPLETE = """HPI: Chest pain for two days with nausea. Denies fever.
ALLERGIES: Penicillin.
MEDICATIONS: Lisinopril 10 mg daily.
VITALS: BP 150/95.
PLAN: Return to the ER if chest pain worsens. Follow up in 2 weeks.
"""


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


@pytest.fixture(scope="module")
def facts(kb):
    transcript = build_transcript_facts(parse_transcript(VISIT), kb, dense=False)
    return transcript, visit_facts(transcript, kb)


def by_text(found):
    return {f.text: f for f in found}


def test_the_visit_s_facts_have_a_category_an_importance_and_a_transcript_span(facts):
    _, found = facts
    got = by_text(found)
    assert got["chest pain"].category == "symptom" and got["chest pain"].importance == "critical"
    assert got["chest pain"].why_critical == "red-flag symptom"
    assert got["no fever"].polarity == "denied" and got["no fever"].importance == "routine"
    assert got["penicillin"].category == "allergy" and got["penicillin"].importance == "critical"
    assert got["zestril"].category == "medication" and got["zestril"].attribute == ""
    dose = got["zestril 10 milligrams"]
    assert dose.attribute == "dose" and [q.value for q in dose.quantities] == [10.0]
    vital = got["blood pressure 150/95"]
    assert vital.attribute == "value" and vital.why_critical == "abnormal vital sign"
    assert got["return precautions"].importance == "critical"
    assert got["follow-up"].importance == "routine"
    for f in found:  # every fact points at the transcript sentence it was read from
        start, end = f.spans[0]
        assert VISIT[start:end] == f.quote
    assert [f.id for f in found] == [f"f{i}" for i in range(1, len(found) + 1)]


def test_side_effects_the_doctor_explains_are_not_facts_about_the_patient(facts):
    _, found = facts
    assert not {"dizziness", "cough"} & set(by_text(found))


def test_a_complete_note_covers_every_fact_through_synonyms_and_brand_names(kb, facts):
    transcript, found = facts
    statuses = {c.fact.text: c.status for c in check_facts(found, COMPLETE, transcript, kb)}
    assert statuses["zestril"] == "covered"  # Zestril is lisinopril
    omitted = [t for t, s in statuses.items() if s != "covered"]
    assert omitted == ["ekg"] or omitted == [], statuses


def test_omissions_contradictions_and_dose_conflicts_are_told_apart(kb, facts):
    transcript, found = facts
    note = (
        "HPI: Chest pain for two days. Reports fever.\n"
        "MEDICATIONS: Lisinopril 40 mg daily. Penicillin.\n"
        "PLAN: Follow up in 2 weeks.\n"
    )
    result = {c.fact.text: c for c in check_facts(found, note, transcript, kb)}
    assert result["no fever"].status == "contradicted"
    assert result["zestril"].status == "covered"  # the drug is there ...
    dose = result["zestril 10 milligrams"]  # ... at another dose
    assert dose.status == "contradicted" and "10" in dose.rationale and "40" in dose.rationale
    assert result["blood pressure 150/95"].status == "omitted"
    # a drug listed among the medications does not record the allergy to it
    assert result["penicillin"].status == "omitted"
    assert result["return precautions"].status == "omitted"
    assert result["nausea"].status == "omitted"
    covered = result["chest pain"]
    assert covered.status == "covered" and note[covered.note_start : covered.note_end].startswith(
        "Chest pain"
    )


def test_a_blanket_negative_review_of_systems_covers_denied_symptoms(kb, facts):
    transcript, found = facts
    note = "HPI: Chest pain for two days.\nROS: Otherwise negative.\nMeds: lisinopril.\n"
    result = {c.fact.text: c.status for c in check_facts(found, note, transcript, kb)}
    assert result["no fever"] == "covered" and result["nausea"] == "omitted"
    assert result["zestril"] == "covered" and result["zestril 10 milligrams"] == "omitted"


def omission_judge(kb, **kwargs):
    return build_evaluator("omission", BuildOptions(backend="offline", knowledge=kb, **kwargs))


def test_rates_pool_facts_with_wilson_intervals_and_count_exclusions(kb):
    judge = omission_judge(kb)
    items = [
        Item(id="full", transcript=VISIT, note=COMPLETE),
        Item(id="thin", transcript=VISIT, note="Chest pain."),
    ]
    rows = [asyncio.run(judge.evaluate(i)) for i in items]
    full, thin = rows
    assert full["omission_rate"] < thin["omission_rate"]
    assert thin["critical_omission_rate"] == pytest.approx(
        thin["n_critical_omitted"] / thin["n_critical"]
    )
    assert judge.score(full) > judge.score(thin)
    failed = {**thin, "id": "lost", "facts": None, "failure": {"kind": "error", "reason": "x"}}
    summary = judge.summarize([*rows, failed])
    rate = summary["headline"]["omission_rate"]
    omitted = full["n_omitted"] + thin["n_omitted"]
    assert rate["n"] == full["n_facts"] + thin["n_facts"]
    assert rate["value"] == pytest.approx(omitted / rate["n"])
    assert rate["ci95"][0] < rate["value"] < rate["ci95"][1]
    assert summary["excluded"] == 1 and rate["excluded_items"] == 1
    assert summary["by_importance"]["critical"]["facts"] == full["n_critical"] + thin["n_critical"]


def test_a_compare_run_reports_the_omission_judge(tmp_path, kb):
    data = tmp_path / "notes.jsonl"
    with data.open("w") as f:
        for id_, note in (("a", COMPLETE), ("b", "Chest pain.")):
            f.write(json.dumps({"id": id_, "transcript": VISIT, "note": note}) + "\n")
    judge = omission_judge(kb)
    run_compare_sync(load_items(data), {"omission": judge}, tmp_path / "out")
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    headline = report["judges"]["omission"]["headline"]
    assert set(headline) == {"omission_rate", "critical_omission_rate", "contradiction_rate"}
    lines = (tmp_path / "out" / "verdicts.jsonl").read_text().splitlines()
    facts = [json.loads(line)["fact"] for line in lines]
    assert {f["status"] for f in facts} >= {"covered", "omitted"}


def llm_judge(stub):
    settings = LLMSettings(model="stub-omission", base_url=stub.base_url, max_retries=0)
    return build_evaluator("omission", BuildOptions(backend="llm", settings=settings))


FACTS_REPLY = json.dumps(
    {
        "facts": [
            {
                "fact": "Chest pain for two days.",
                "category": "symptom",
                "importance": "critical",
                "quote": "i've had chest pain for two days",
            },
            {"fact": "No fever.", "category": "symptom", "importance": "routine", "quote": "no ."},
        ]
    }
)


def test_llm_path_reads_facts_and_statuses_over_http(openai_stub):
    coverage = {
        "facts": [
            {"id": "f1", "status": "covered", "quote": "Chest pain for two days"},
            {"id": "f2", "status": "omitted", "quote": ""},
        ]
    }
    openai_stub.script(sequence(Reply(FACTS_REPLY), Reply(json.dumps(coverage))))
    judge = llm_judge(openai_stub)
    row = asyncio.run(judge.evaluate(Item(id="v", transcript=VISIT, note=COMPLETE)))
    assert row["failure"] is None and not row["retry"]
    assert (row["n_facts"], row["n_omitted"], row["n_critical_omitted"]) == (2, 1, 0)
    first = row["facts"][0]
    assert VISIT[first["spans"][0][0] : first["spans"][0][1]] == "i've had chest pain for two days"
    assert COMPLETE[first["note_span"][0] : first["note_span"][1]] == "Chest pain for two days"
    assert [p["name"] for p in judge.provenance()["prompts"]] == [
        "omission.visit_facts",
        "omission.coverage",
    ]
    assert len(openai_stub.requests) == 2


@pytest.mark.parametrize(
    "coverage_reply",
    [
        "The note covers most facts.",  # prose
        json.dumps({"facts": [{"id": "f1", "status": "covered", "quote": ""}]}),  # f2 missing
        json.dumps({"facts": [{"id": "f1", "status": "maybe"}, {"id": "f2", "status": "omitted"}]}),
    ],
)
def test_an_unusable_coverage_reply_is_a_parse_failure_retried_never_a_guess(
    openai_stub, coverage_reply
):
    openai_stub.script(sequence(Reply(FACTS_REPLY), Reply(coverage_reply)))
    judge = llm_judge(openai_stub)
    row = asyncio.run(judge.evaluate(Item(id="v", transcript=VISIT, note=COMPLETE)))
    assert row["retry"] and row["failure"]["kind"] == "parse_failure", row["failure"]
    assert row["facts"] is None and row["omission_rate"] is None
    summary = judge.summarize([row])
    assert summary["excluded"] == 1 and summary["headline"]["omission_rate"]["value"] is None


def test_a_fact_reply_with_an_unknown_category_is_a_parse_failure(openai_stub):
    bad = {"facts": [{"fact": "x", "category": "vibes", "importance": "routine", "quote": ""}]}
    openai_stub.script(sequence(Reply(json.dumps(bad))))
    row = asyncio.run(llm_judge(openai_stub).evaluate(Item(id="v", transcript=VISIT, note="x")))
    assert row["failure"]["kind"] == "parse_failure" and row["retry"]


def test_social_history_and_lay_named_procedures_are_facts_too(kb):
    visit = (
        "[doctor] do you smoke ?\n[patient] no .\n"
        "[doctor] any surgeries ?\n[patient] i had my appendix removed when i was a teenager .\n"
    )
    transcript = build_transcript_facts(parse_transcript(visit), kb, dense=False)
    found = by_text(visit_facts(transcript, kb))
    assert found["no tobacco use"].category == "history"
    assert found["appendix removed"].category == "history"  # a procedure the patient had
    statuses = {
        note: {
            c.fact.text: c.status for c in check_facts(list(found.values()), note, transcript, kb)
        }
        for note in ("Denies tobacco use. PSH: appendectomy.", "Current smoker.", "Well.")
    }
    assert statuses["Denies tobacco use. PSH: appendectomy."] == {
        "no tobacco use": "covered",
        "appendix removed": "covered",
    }
    assert statuses["Current smoker."]["no tobacco use"] == "contradicted"
    assert set(statuses["Well."].values()) == {"omitted"}


def test_a_question_about_several_habits_is_answered_item_by_item(kb):
    visit = (
        "[doctor] any history of smoking , illicit drug use , heavy alcohol consumption ?\n"
        "[patient] no drugs . i do drink socially . and i used to smoke , i quit 30 years ago .\n"
    )
    transcript = build_transcript_facts(parse_transcript(visit), kb, dense=False)
    found = by_text(visit_facts(transcript, kb))
    assert {"no recreational drug use", "alcohol use", "tobacco use"} <= set(found)
    note = (
        "SOCIAL HISTORY\nAlcohol: Socially.\nIllicit drug use: Never.\n"
        "Tobacco: Former smoker.\nEncouraged to cease alcohol consumption.\n"
    )
    statuses = {
        c.fact.text: c.status for c in check_facts(list(found.values()), note, transcript, kb)
    }
    assert statuses["no recreational drug use"] == "covered"  # "Illicit drug use: Never."
    assert statuses["alcohol use"] == "covered" and statuses["tobacco use"] == "covered"


def facts_of(kb, visit: str):
    transcript = build_transcript_facts(parse_transcript(visit), kb, dense=False)
    return transcript, by_text(visit_facts(transcript, kb))


def test_what_is_not_the_patients_gives_no_fact(kb):
    visit = (
        "[doctor] watch for low sugars , weak , shaky , sweaty .\n"
        "[doctor] even the wheat bread , try to cut down on the slices you eat per day .\n"
        "[patient] i think my fourth cousin has scoliosis .\n"
        "[doctor] how is everyone , other than being sick for your sister ?\n"
        "[doctor] rate the headache at zero no pain ten the worst pain ever .\n"
        "[doctor] and how about your blood pressure ?\n"
        "[patient] i hardly drink , drink any sodas .\n"
        "[doctor] inflammation can do that .\n"
    )
    _, found = facts_of(kb, visit)
    for word in ("shaky", "sweaty", "wheat", "scoliosis", "sick", "pain", "blood pressure"):
        assert not any(word in text for text in found), (word, sorted(found))
    assert not any("drink" in text or "inflammation" in text for text in found)


def test_a_condition_allergy_is_history_and_a_drug_allergy_stays_critical(kb):
    visit = (
        "[patient] i take claritin for allergies .\n"
        "[patient] and i'm allergic to penicillin , i get hives .\n"
    )
    _, found = facts_of(kb, visit)
    assert found["allergies"].category == "history"
    assert found["allergies"].importance == "routine"
    assert found["penicillin"].category == "allergy"
    assert found["penicillin"].importance == "critical"


def test_findings_the_clinician_examines_are_critical_in_their_own_statement(kb):
    visit = (
        "[doctor] your blood pressure is fine at 118/77 and on your right ankle i do see some "
        "edema .\n"
        "[doctor] okay so pain with lumbar flexion alright .\n"
        "[doctor] you have high blood pressure , so we will check it again .\n"
    )
    _, found = facts_of(kb, visit)
    assert found["edema"].importance == "critical"  # "fine" is said of the blood pressure
    assert found["edema"].why_critical == "abnormal exam finding"


def test_a_drug_class_and_a_named_panel_carry_the_drug_and_the_labs(kb):
    visit = (
        "[doctor] let's avoid ibuprofen and use tylenol instead .\n"
        "[doctor] we'll get the labs today .\n"
        "[doctor] any headaches or dizziness ?\n[patient] headaches or dizziness , no .\n"
    )
    transcript, found = facts_of(kb, visit)
    assert {"no headaches", "no dizziness"} <= set(found)
    note = "Avoid NSAIDs; acetaminophen instead. CBC, CMP and A1C ordered."
    statuses = {
        c.fact.text: c.status for c in check_facts(list(found.values()), note, transcript, kb)
    }
    assert statuses["ibuprofen"] == "covered"
    assert statuses["labs"] == "covered"
    assert statuses["no headaches"] == "omitted"
