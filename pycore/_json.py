"""JSON helpers: ``loads`` for stream events, and ``loads_arguments`` for a tool call's arguments.

:func:`loads` is pydantic-core's ``from_json`` (jiter), and ``json.loads`` for whatever jiter refuses:
the standard library's value, or its error, decides.

A tool call cut by ``max_tokens`` (or broken otherwise) leaves arguments like ``{"a": "x", "b": ["p", "q``
behind. They are not completed by a guess: :func:`loads_arguments` refuses them with the parser's reason,
the call keeps the text as written (``ToolCallPart.raw_arguments``), and the loop tells the model instead of
running it, as the vendors' agent SDKs do.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import from_json


def loads(text: str | bytes) -> Any:
    try:
        return from_json(text)
    except (ValueError, TypeError):
        # jiter refuses some texts the standard library reads (and a str holding a lone surrogate with
        # a TypeError, as it cannot be UTF-8): the standard library's value, or its error, decides.
        return json.loads(text)


class ArgumentsError(ValueError):
    """Tool-call arguments that are not a JSON object: the message says why, for the model."""


_KINDS = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number",
          type(None): "null"}


def loads_arguments(text: str) -> dict[str, Any]:
    """Tool-call arguments: ``{}`` for empty text (a call without arguments), else the JSON object the text is.

    Anything else raises :class:`ArgumentsError`: cut-off JSON is not completed by a guess (a call would run
    with arguments the model never wrote), and a value that is not an object is not wrapped into one.
    """
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as e:
        raise ArgumentsError(f"arguments were not valid JSON: {e}") from e
    if not isinstance(value, dict):
        raise ArgumentsError(f"arguments were not a JSON object (got {_KINDS.get(type(value), 'a value')})")
    return value
