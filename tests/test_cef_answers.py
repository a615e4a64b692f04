"""The CEF answer parser (SPEC §2 pitfalls): the first token decides, anything else is a parse
failure — never NO."""

from __future__ import annotations

import pytest

from clinjudge.cef.answers import parse_answer


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("IDK, the note does not say NOT", "IDK"),  # the reference code read this as NO
        ("No.", "NO"),
        ("Yes — clearly", "YES"),
        ("yes", "YES"),
        ("  **NO**, the text says the opposite", "NO"),
        ('"IDK"', "IDK"),
        ("I don't know, it is not mentioned", "IDK"),
        ("I do not know", "IDK"),
        ("<think>maybe no?</think>YES", "YES"),
    ],
)
def test_first_token_gives_the_answer(reply, expected):
    assert parse_answer(reply) == expected


@pytest.mark.parametrize(
    "reply",
    ["Maybe", "", None, "Not stated in the note", "Y", "YES/NO", "Answer: YES", "Nope, NO"],
)
def test_anything_else_is_a_parse_failure(reply):
    assert parse_answer(reply) is None
