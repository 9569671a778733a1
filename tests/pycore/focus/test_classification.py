"""The classifier's answer: validated with pydantic, read from a tool call or from JSON text."""

from __future__ import annotations

import pytest

from pycore.focus.classification import TOOL_NAME, InvalidClassification, json_schema, parse, validate
from pycore.messages import Completion, ErrorInfo, Message, TextPart, ToolCallPart

pytestmark = pytest.mark.pyodide
GOOD = {"labels": ["CONSTRAINT_ADDITION", "REFINEMENT"], "reason": "adds a limit", "problem": "",
        "constraints": ["Budget under 6000 EUR"], "decisions": [], "contradicts": ["c2"]}


def completion(*parts, error=None) -> Completion:
    return Completion(vendor="openai", message=Message(role="assistant", parts=list(parts)), error=error)


def test_a_forced_tool_call_is_read_from_its_arguments():
    got = parse(completion(ToolCallPart(id="1", name=TOOL_NAME, arguments=GOOD)))
    assert got.labels == ["CONSTRAINT_ADDITION", "REFINEMENT"] and got.contradicts == ["c2"]


@pytest.mark.parametrize("text", ['{"labels": ["QUESTION"], "reason": "asks"}',
                                  '```json\n{"labels": ["QUESTION"], "reason": "asks"}\n```'])
def test_json_text_is_read_fenced_or_not(text):
    assert parse(completion(TextPart(text=text))).labels == ["QUESTION"]


@pytest.mark.parametrize(("data", "where"), [
    ({"labels": [], "reason": "x"}, "labels"),
    ({"labels": ["QUESTION", "REFINEMENT", "UNCLEAR"], "reason": "x"}, "labels"),
    ({"labels": ["QUESTION", "QUESTION"], "reason": "x"}, "labels"),
    ({"labels": ["GREETING"], "reason": "x"}, "labels.0"),
    ({"labels": ["QUESTION"], "reason": " \n "}, "reason"),
    ({"labels": ["QUESTION"]}, "reason"),
    (["QUESTION"], "answer"),
])
def test_what_does_not_fit_is_named(data, where):
    with pytest.raises(InvalidClassification, match=f"does not fit: {where}"):
        validate(data)


@pytest.mark.parametrize(("c", "message"), [
    (completion(TextPart(text="")), "empty"),
    (completion(TextPart(text="labels: QUESTION")), "not JSON"),
    (completion(error=ErrorInfo(status=200, type="overloaded_error", message="x")), "error"),
])
def test_empty_broken_or_error_answers_are_invalid(c, message):
    with pytest.raises(InvalidClassification, match=message):
        parse(c)


def test_the_reason_becomes_one_short_line_and_ids_are_cleaned():
    got = validate({**GOOD, "reason": "first\nsecond  " + "x" * 300, "contradicts": ["c2", "c2", "bogus", " c7 "],
                    "extra": "ignored"})
    assert "\n" not in got.reason and len(got.reason) <= 200 and got.reason.startswith("first second")
    assert got.contradicts == ["c2", "c7"]


def test_the_schema_lists_every_label_and_requires_every_field():
    schema = json_schema()
    assert schema["properties"]["labels"]["items"]["enum"] == [
        "PROBLEM_DEFINITION", "CONSTRAINT_ADDITION", "REFINEMENT", "QUESTION", "UNCLEAR"]
    assert set(schema["required"]) == set(schema["properties"]) and schema["additionalProperties"] is False
    assert "additionalProperties" not in json_schema(closed=False)
