"""Elicitation (MCP 2025-11-25): a server asks the user something in the middle of a request.

``elicitation/create`` comes in two modes:

- **form**: ``message`` and a ``requestedSchema``, a flat object whose properties are primitives: a string
  (``minLength``, ``maxLength``, ``format``: ``email``, ``uri``, ``date``, ``date-time``), a number or an
  integer (``minimum``, ``maximum``), a boolean, a single choice (``enum``, or ``oneOf`` of ``{const,
  title}``) or a multiple choice (an ``array`` whose ``items`` are such a choice; ``minItems``, ``maxItems``).
  :func:`check_schema` refuses anything else (the page could not draw it as a form), and :func:`accept`
  checks what the user entered against it, filling in the schema's defaults for fields left out (SEP-1034).
- **url**: ``message``, ``url`` and ``elicitationId``: the user is sent to a page of the server's (to sign in,
  to pay) and answers only whether they went. The page shows the URL and its host and opens it only after
  consent; the URL must be ``https`` (``http`` only on loopback), and one the browser reads as we do: the host
  shown is the browser's reading (:func:`link_host`), and a URL parsers could disagree on is refused.

The answer is ``{action: "accept" | "decline" | "cancel", content?}`` (``content`` only with a form's accept).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from pycore.http import origin

ACTIONS = ("accept", "decline", "cancel")
STRING_FORMATS = {
    "email": re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$"),
    "uri": re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$"),
    "date": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
    "date-time": re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$"),
}
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


class ElicitationError(ValueError):
    """A request the page cannot put to the user, or an answer that does not fit the request."""


def check_request(params: dict[str, Any]) -> str:
    """The request's mode, once it is one the page can show; raises :class:`ElicitationError` naming why not."""
    mode = params.get("mode") or "form"
    if not isinstance(params.get("message"), str):
        raise ElicitationError("an elicitation needs a message for the user")
    if mode == "form":
        check_schema(params.get("requestedSchema"))
    elif mode == "url":
        check_url(params.get("url"))
        if not isinstance(params.get("elicitationId"), str) or not params["elicitationId"]:
            raise ElicitationError("a URL elicitation needs an elicitationId")
    else:
        raise ElicitationError(f"unknown elicitation mode {mode!r} (form or url)")
    return str(mode)


def check_url(url: Any) -> None:
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or not parts.hostname:
        raise ElicitationError("a URL elicitation needs an absolute URL")
    if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in LOOPBACK):
        raise ElicitationError(f"the elicitation URL must be https, not {parts.scheme}:")
    link_host(url)


def link_host(url: str) -> str:
    """The host the browser goes to for ``url`` (WHATWG parsing, :mod:`pycore.http.origin`): what the user is
    shown. A URL whose host parsers could read differently (a backslash, userinfo, an encoded or odd host, a
    control character) is refused: Python's ``urlsplit`` reads ``https://evil.example\\@bank.example/`` as
    bank.example, the browser goes to evil.example."""
    try:
        return origin.split(url)[0].host
    except origin.AmbiguousURLError as e:
        raise ElicitationError(f"the elicitation URL is refused: {e.reason}") from None


def check_schema(schema: Any) -> None:
    if not isinstance(schema, dict) or schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
        raise ElicitationError("requestedSchema must be an object schema with properties")
    for name, field in schema["properties"].items():
        if not isinstance(field, dict) or not _primitive(field):
            raise ElicitationError(f"field {name!r}: only strings, numbers, booleans and choices can be asked for")


def _primitive(field: dict[str, Any]) -> bool:
    kind = field.get("type")
    if kind == "array":
        items = field.get("items")
        return isinstance(items, dict) and bool(_choices(items))
    return kind in ("string", "number", "integer", "boolean")


def _choices(field: dict[str, Any]) -> list[Any]:
    """The values a choice allows: ``enum``, or ``oneOf``/``anyOf`` of ``{const}``."""
    if isinstance(field.get("enum"), list):
        return list(field["enum"])
    options = field.get("oneOf") or field.get("anyOf")
    if isinstance(options, list) and all(isinstance(o, dict) and "const" in o for o in options):
        return [o["const"] for o in options]
    return []


def accept(schema: dict[str, Any], content: dict[str, Any] | None) -> dict[str, Any]:
    """The user's answer to a form: the schema's defaults for fields left out, then every field checked.
    Raises :class:`ElicitationError` naming each problem (the page shows it and the user corrects it)."""
    properties: dict[str, Any] = schema.get("properties") or {}
    given = dict(content or {})
    unknown = sorted(set(given) - set(properties))
    if unknown:
        raise ElicitationError(f"not asked for: {', '.join(unknown)}")
    out = {name: field["default"] for name, field in properties.items() if "default" in field and name not in given}
    out.update({name: value for name, value in given.items() if value is not None})
    problems = [f"{name}: required" for name in schema.get("required") or [] if name not in out]
    problems += [f"{name}: {problem}" for name, value in out.items()
                 if (problem := _problem(properties[name], value)) is not None]
    if problems:
        raise ElicitationError("; ".join(problems))
    return out


def _problem(field: dict[str, Any], value: Any) -> str | None:  # noqa: C901 - one branch per JSON Schema keyword
    kind = field.get("type")
    if kind == "array":
        allowed = _choices(field["items"])
        if not isinstance(value, list) or any(v not in allowed for v in value):
            return f"choose from {allowed}"
        if len(value) < field.get("minItems", 0) or len(value) > field.get("maxItems", len(value)):
            return "too few or too many choices"
        return None
    allowed = _choices(field)
    if allowed and value not in allowed:
        return f"choose one of {allowed}"
    if kind == "boolean":
        return None if isinstance(value, bool) else "must be true or false"
    if kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float) or (kind == "integer" and value != int(value)):
            return f"must be {'a whole number' if kind == 'integer' else 'a number'}"
        if "minimum" in field and value < field["minimum"]:
            return f"at least {field['minimum']}"
        if "maximum" in field and value > field["maximum"]:
            return f"at most {field['maximum']}"
        return None
    if not isinstance(value, str):
        return "must be text"
    if len(value) < field.get("minLength", 0):
        return f"at least {field['minLength']} characters"
    if "maxLength" in field and len(value) > field["maxLength"]:
        return f"at most {field['maxLength']} characters"
    pattern = STRING_FORMATS.get(field.get("format", ""))
    if pattern is not None and not pattern.match(value):
        return f"not a valid {field['format']}"
    return None
