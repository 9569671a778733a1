"""The regular-expression pieces of pycore._json accept exactly what the JSON grammar accepts."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pycore._json import INT, PLAIN_BODY, STRING_BODY, string_value

pytestmark = pytest.mark.pyodide

# Characters that matter to a JSON string's inside: quotes, backslashes, what may follow a backslash,
# hex digits, control characters, and text beyond ASCII (a lone surrogate too).
TRICKY = ['"', "\\", "/", "b", "f", "n", "r", "t", "u", "0", "a", "F", "g", "\x00", "\x1f", "\n", " ", "é", "\ud800"]


def _json_accepts(body: str) -> bool:
    try:
        json.loads(f'"{body}"')
    except ValueError:
        return False
    return True


@given(st.lists(st.sampled_from(TRICKY), max_size=12).map("".join))
@example('\ud800\\"')  # pydantic-core's from_json raised TypeError on the lone surrogate (found by hypothesis)
def test_a_string_inside_matches_exactly_when_json_reads_it(body: str) -> None:
    matched = re.fullmatch(STRING_BODY, body) is not None
    assert matched == _json_accepts(body)
    if matched:
        assert string_value(body) == json.loads(f'"{body}"')


@given(st.text())
def test_every_encoded_string_matches_and_decodes_back(text: str) -> None:
    for ensure_ascii in (True, False):
        body = json.dumps(text, ensure_ascii=ensure_ascii)[1:-1]
        assert re.fullmatch(STRING_BODY, body)
        assert string_value(body) == text


@given(st.lists(st.sampled_from(TRICKY), max_size=12).map("".join))
def test_a_plain_inside_is_one_without_escapes(body: str) -> None:
    assert (re.fullmatch(PLAIN_BODY, body) is not None) == (_json_accepts(body) and "\\" not in body)


@given(st.text(alphabet="0123456789-+.e", max_size=6))
def test_an_int_is_a_json_integer_without_sign(text: str) -> None:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    expected = type(value) is int and value >= 0 and not text.startswith("-")
    assert (re.fullmatch(INT, text) is not None) == expected
