"""What the classifier must answer, its JSON schema, and reading it out of a completion.

The answer is validated with pydantic: one or two labels from :data:`LABELS`, a one-line reason,
and what the message adds to the focus tiers (a restated problem, new constraints or decisions,
ids of existing constraints it contradicts). Anything else is :class:`InvalidClassification`.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from pycore.messages import Completion

Label = Literal["PROBLEM_DEFINITION", "CONSTRAINT_ADDITION", "REFINEMENT", "QUESTION", "UNCLEAR"]
LABELS: tuple[str, ...] = get_args(Label)
TOOL_NAME = "record_classification"
MAX_REASON = 200
MAX_STATEMENT = 300
MAX_STATEMENTS = 8


class InvalidClassification(ValueError):
    """The classifier's output is not a classification; the message says what was wrong."""


class Classification(BaseModel):
    model_config = ConfigDict(extra="ignore")  # a model adding a field is not an error

    labels: list[Label] = Field(min_length=1, max_length=2)
    reason: str = Field(min_length=1)
    problem: str = ""  # the problem as the user now defines it (PROBLEM_DEFINITION)
    constraints: list[str] = Field(default_factory=list, max_length=MAX_STATEMENTS)
    decisions: list[str] = Field(default_factory=list, max_length=MAX_STATEMENTS)
    contradicts: list[str] = Field(default_factory=list)  # ids of existing constraints

    @field_validator("labels")
    @classmethod
    def _distinct(cls, labels: list[str]) -> list[str]:
        if len(set(labels)) != len(labels):
            raise ValueError("labels repeat")
        return labels

    @field_validator("reason")
    @classmethod
    def _one_line(cls, reason: str) -> str:
        line = " ".join(reason.split())
        if not line:
            raise ValueError("reason is empty")
        return line if len(line) <= MAX_REASON else line[: MAX_REASON - 1] + "…"

    @field_validator("problem")
    @classmethod
    def _problem(cls, problem: str) -> str:
        return " ".join(problem.split())[:2000]

    @field_validator("constraints", "decisions")
    @classmethod
    def _statements(cls, items: list[str]) -> list[str]:
        return [s[:MAX_STATEMENT] for s in (" ".join(item.split()) for item in items) if s]

    @field_validator("contradicts")
    @classmethod
    def _ids(cls, ids: list[str]) -> list[str]:
        return [i for i in dict.fromkeys(str(i).strip() for i in ids) if re.fullmatch(r"c[0-9]+", i)]

    @classmethod
    def unclear(cls, reason: str) -> Classification:
        return cls(labels=["UNCLEAR"], reason=reason)


def json_schema(*, closed: bool = True) -> dict[str, Any]:
    """The answer's JSON schema. ``closed`` adds ``additionalProperties: false`` (OpenAI's strict
    structured output wants it; Gemini's schema subset rejects it)."""
    strings = {"type": "array", "items": {"type": "string"}}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "labels": {
                "type": "array",
                "items": {"type": "string", "enum": list(LABELS)},
                "minItems": 1,
                "maxItems": 2,
                "description": "One or two labels, the main one first.",
            },
            "reason": {"type": "string", "description": "One short line: why these labels."},
            "problem": {
                "type": "string",
                "description": "With PROBLEM_DEFINITION: the problem restated in one or two sentences. Else empty.",
            },
            "constraints": {**strings, "description": "New constraints, each condensed to one short sentence."},
            "decisions": {**strings, "description": "New decisions or refinements, each one short sentence."},
            "contradicts": {**strings, "description": "Ids (like c3) of listed constraints this message contradicts."},
        },
        "required": ["labels", "reason", "problem", "constraints", "decisions", "contradicts"],
    }
    if closed:
        schema["additionalProperties"] = False
    return schema


def parse(completion: Completion) -> Classification:
    """The classification in a completion: the forced tool's arguments, else JSON in the text."""
    if completion.error is not None:
        raise InvalidClassification(f"the classifier answered with an error ({completion.error.type or 'error'})")
    calls = [c for c in completion.tool_calls() if c.name == TOOL_NAME]
    if calls:
        if calls[0].raw_arguments is not None:  # cut off or broken: never completed by a guess (pycore._json)
            raise InvalidClassification("the classifier's answer is not JSON")
        return validate(calls[0].arguments)
    text = completion.text().strip()
    if not text:
        raise InvalidClassification("the classifier's answer is empty")
    return validate(_json_object(text))


def validate(data: Any) -> Classification:
    try:
        return Classification.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "answer"
        raise InvalidClassification(f"the classifier's answer does not fit: {where}: {first['msg']}") from None


def _json_object(text: str) -> Any:
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.DOTALL)  # some models fence it anyway
    try:
        return json.loads(fenced.group(1) if fenced else text)
    except ValueError:
        raise InvalidClassification("the classifier's answer is not JSON") from None
