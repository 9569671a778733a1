"""JSON helpers: ``loads`` for stream events, and partial parsing of streamed tool arguments.

:func:`loads` is pydantic-core's ``from_json`` (jiter), and ``json.loads`` for whatever jiter refuses:
the standard library's value, or its error, decides.

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
