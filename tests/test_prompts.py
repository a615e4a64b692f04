"""Prompt files: loading, hashing, overriding, rendering (clinjudge/prompts)."""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

import pytest

from clinjudge.prompts import Prompt, list_prompts, load_prompt, parse_prompt_overrides

JUDGES = ("soap.lexical", "soap.inference_aware")


def test_builtins_are_listed_sorted_and_every_one_loads() -> None:
    names = list_prompts()
    assert names == sorted(names)
    assert {
        "detect.conservative",
        "detect.neutral",
        "soap.claim_extraction",
        "soap.inference_aware",
        "soap.lexical",
    } <= set(names)
    for name in names:
        prompt = load_prompt(name)
        assert prompt.name == name and prompt.text.strip()


@pytest.mark.parametrize("name", ["soap.claim_extraction", *JUDGES])
def test_builtin_loads_with_name_version_and_file_hash(name: str) -> None:
    prompt = load_prompt(name)
    content = (resources.files("clinjudge.prompts") / f"{name}.md").read_text(encoding="utf-8")
    version = content.split("version:", 1)[1].split()[0]
    assert prompt.name == name and prompt.version == version and version.isdigit()
    assert prompt.sha256 == hashlib.sha256(content.encode()).hexdigest()
    assert prompt.builtin and prompt.path == ""
    assert not prompt.text.startswith("---") and "version:" not in prompt.text[:200]
    ref = prompt.ref()
    assert (ref.name, ref.version, ref.sha256, ref.path) == (name, version, prompt.sha256, "")


def test_placeholders_of_builtins() -> None:
    assert load_prompt("soap.claim_extraction").placeholders == {"note"}
    for name in JUDGES:
        assert load_prompt(name).placeholders == {"transcript", "note_sections", "claims"}


@pytest.mark.parametrize("name", JUDGES)
def test_judge_prompts_ask_for_the_verdict_json(name: str) -> None:
    text = load_prompt(name).text
    for field in ('"verdicts"', '"claim_id"', '"tier"', '"reason"', '"turns"', '"severity"'):
        assert field in text


def test_lexical_prompt_has_only_tiers_1_4_5() -> None:
    text = load_prompt("soap.lexical").text
    assert "`restatement`" in text and "`no_basis`" in text and "`contradiction`" in text
    for subtype in ("`trade_generic`", "`abbreviation`", "`terminology`", "`inference`"):
        assert subtype not in text


def test_inference_aware_prompt_covers_spec_rules() -> None:
    text = load_prompt("soap.inference_aware").text.lower()
    for phrase in (
        "last resort",  # five-step protocol
        "all four sections",  # cross-section verification
        "trade and generic names (non-negotiable)",
        "safety floor",
        "knowledge",
    ):
        assert phrase in text
    for subtype in ("paraphrase", "terminology", "trade_generic", "abbreviation", "inference"):
        assert f"`{subtype}`" in text


def test_render_inserts_values_with_braces_literally() -> None:
    claims = json.dumps([{"id": "c1", "text": "BP {high}", "knowledge": [{"k": "{0}"}]}])
    rendered = load_prompt("soap.inference_aware").render(
        transcript="[doctor] any {pain}? {{note}}", note_sections="{}", claims=claims
    )
    assert claims in rendered
    assert "[doctor] any {pain}? {{note}}" in rendered  # a value is never re-substituted
    assert "{{transcript}}" not in rendered and "{{claims}}" not in rendered


def test_render_spaces_in_placeholder_and_extra_vars() -> None:
    prompt = Prompt(name="t", version="1", text="A {{ x }} B {{x}} {y}", sha256="0")
    assert prompt.render(x="1", unused="z") == "A 1 B 1 {y}"


def test_missing_variable_raises_key_error_naming_it() -> None:
    with pytest.raises(KeyError, match="note_sections") as info:
        load_prompt("soap.lexical").render(transcript="t", claims="[]")
    assert "soap.lexical" in str(info.value)


def test_unknown_builtin() -> None:
    with pytest.raises(KeyError, match="soap.nope"):
        load_prompt("soap.nope")


def test_override_with_front_matter_changes_hash_and_is_reported(tmp_path: Path) -> None:
    builtin = load_prompt("soap.inference_aware")
    path = tmp_path / "mine.md"
    path.write_text("---\nname: soap.inference_aware\nversion: 2b\n---\nJudge {{claims}}\n")
    prompt = load_prompt("soap.inference_aware", path)
    assert prompt.name == "soap.inference_aware" and prompt.version == "2b"
    assert prompt.text == "Judge {{claims}}\n"
    assert prompt.sha256 != builtin.sha256
    assert prompt.ref().path == str(path.resolve()) and not prompt.builtin


def test_override_without_front_matter_is_custom(tmp_path: Path) -> None:
    path = tmp_path / "plain.md"
    path.write_text("Check {{transcript}} against {{claims}}.")
    prompt = load_prompt("soap.lexical", str(path))
    assert (prompt.name, prompt.version) == ("soap.lexical", "custom")
    assert prompt.text == "Check {{transcript}} against {{claims}}."
    assert prompt.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_override_with_unknown_placeholder_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "typo.md"
    path.write_text("Check {{transcrpt}}")
    with pytest.raises(ValueError, match="transcrpt"):
        load_prompt("soap.lexical", path)


def test_override_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot read"):
        load_prompt("soap.lexical", tmp_path / "absent.md")


def test_parse_prompt_overrides(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_text("x")
    items = [f"soap.inference_aware={path}", f" soap.lexical = {path} "]
    assert parse_prompt_overrides(items) == {"soap.inference_aware": path, "soap.lexical": path}
    assert parse_prompt_overrides([]) == {}


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        ("soap.inference_aware", "expected NAME=PATH"),
        ("=p.md", "expected NAME=PATH"),
        ("soap.lexical=", "expected NAME=PATH"),
        ("soap.unknown={path}", "unknown prompt"),
        ("soap.lexical={missing}", "no such file"),
    ],
)
def test_bad_overrides_give_one_line_value_errors(tmp_path: Path, item: str, reason: str) -> None:
    path = tmp_path / "p.md"
    path.write_text("x")
    item = item.format(path=path, missing=tmp_path / "missing.md")
    with pytest.raises(ValueError, match=reason) as info:
        parse_prompt_overrides([item])
    assert "\n" not in str(info.value)


def test_override_given_twice(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_text("x")
    with pytest.raises(ValueError, match="given twice"):
        parse_prompt_overrides([f"soap.lexical={path}", f"soap.lexical={path}"])
