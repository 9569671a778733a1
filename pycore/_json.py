"""JSON helpers: a lean ``loads`` for stream events, regular-expression pieces for the stream
parsers' exact event shapes, and partial parsing of streamed tool arguments.

:func:`loads` is ``json.loads`` for a ``str`` minus its per-call overhead: the C scanner is called
directly, and anything it does not take whole (surrounding whitespace, invalid JSON) goes through
``json.loads`` itself, which gives the same value or the same error.


A tool call cut by ``max_tokens`` leaves arguments like ``{"a": "x", "b": ["p", "q`` behind.
:func:`loads_partial` keeps every complete value (``{"a": "x", "b": ["p"]}``), drops an unfinished
string, number or literal, and closes open containers: the same answer the vendors' SDKs give.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import from_json

_DECODER = json.JSONDecoder()
_WS = " \t\n\r"

# Regular-expression pieces that accept exactly what the JSON grammar accepts (RFC 8259), for the
# stream parsers' usual-event patterns (``StreamParser.usual_event``): what they match decodes to
# the same value with any JSON parser.
#
# Written for sre's costs: entering a repeat of more than one character (``(?:...)*``, ``(?:...)?``)
# allocates a repeat context, a branch does not, and a branch whose alternative starts with a
# literal is skipped at once. So an optional piece is written ``(?:...|)``, and a string enters its
# repeat only when it has a second escape.
_CHAR = r'[^"\\\x00-\x1f]'
_ESCAPE = r'\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})'
STRING_BODY = rf"{_CHAR}*(?:{_ESCAPE}{_CHAR}*(?:{_ESCAPE}{_CHAR}*)*|)"
"""The inside of a JSON string, escapes included; :func:`string_value` gives its value."""
PLAIN_BODY = rf"{_CHAR}*"
"""The inside of a JSON string without escapes: the text is the value."""
INT = r"(?:0|[1-9][0-9]*)"
"""A non-negative JSON integer (no leading zeros)."""


def string_value(body: str) -> str:
    """The value of a JSON string whose inside (:data:`STRING_BODY`) is ``body``."""
    return body if "\\" not in body else loads(f'"{body}"')


def loads(text: str | bytes) -> Any:
    try:
        return from_json(text)
    except (ValueError, TypeError):
        # jiter refuses some texts the standard library reads (and a str holding a lone surrogate with
        # a TypeError, as it cannot be UTF-8): the standard library's value, or its error, decides.
        return json.loads(text)


class _End(Exception):
    """The text ran out before the current value was complete."""


def loads_arguments(text: str) -> dict[str, Any]:
    """Tool-call arguments: ``{}`` for empty text, a best-effort partial parse for a truncated one."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        value = loads_partial(text)
    return value if isinstance(value, dict) else {"value": value}


def loads_partial(text: str) -> Any:
    try:
        value, _ = _value(text, _skip(text, 0))
    except _End:
        return None
    return value


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    if i >= len(text):
        raise _End
    return i


def _value(text: str, i: int) -> tuple[Any, int]:
    ch = text[i]
    if ch == "{":
        return _object(text, i + 1)
    if ch == "[":
        return _array(text, i + 1)
    try:
        value, end = _DECODER.raw_decode(text, i)
    except ValueError as e:
        raise _End from e
    if end >= len(text) and not isinstance(value, str) and ch not in "tfn":
        raise _End  # a number at the very end may still be growing
    return value, end


def _object(text: str, i: int) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    try:
        while True:
            i = _skip(text, i)
            if text[i] == "}":
                return out, i + 1
            if text[i] == ",":
                i += 1
                continue
            key, i = _value(text, i)
            i = _skip(text, i)
            if text[i] != ":":
                raise _End
            i, out[key] = _member(text, _skip(text, i + 1))
    except _End:
        return out, len(text)


def _member(text: str, i: int) -> tuple[int, Any]:
    value, end = _value(text, i)
    return end, value


def _array(text: str, i: int) -> tuple[list[Any], int]:
    out: list[Any] = []
    try:
        while True:
            i = _skip(text, i)
            if text[i] == "]":
                return out, i + 1
            if text[i] == ",":
                i += 1
                continue
            value, i = _value(text, i)
            out.append(value)
    except _End:
        return out, len(text)
