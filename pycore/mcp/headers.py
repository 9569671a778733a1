"""The HTTP headers MCP 2026-07-28 asks of every POST, and the tool arguments a server wants as headers.

``Mcp-Method`` names the JSON-RPC method; ``Mcp-Name`` the tool (``tools/call``), prompt (``prompts/get``),
resource URI (``resources/read``) or task (``tasks/get``, ``tasks/update``, ``tasks/cancel``: the tasks
extension). A tool whose ``inputSchema`` marks a property with ``x-mcp-header: Token`` gets that argument's value
as ``Mcp-Param-Token`` on each of its calls, so a gateway can route on it.

A value that would not survive as an HTTP field (outside printable ASCII, spaces at either end) is sent as
``=?base64?…?=``. A tool whose marks are invalid (not on a plain chain of ``properties``, not an RFC 9110 token,
not on a string, integer or boolean, or the same header twice ignoring case) is not offered at all: the
revision says a client MUST drop it (:func:`invalid_header_mark`).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator, Mapping
from typing import Any

from mcp_types.jsonrpc import JSONRPCMessage, JSONRPCNotification, JSONRPCRequest

HeaderMap = dict[tuple[str, ...], str]  # path of property names -> the header's token
HeaderMaps = Mapping[str, HeaderMap]  # per tool name
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",  # and a task's (SEP-2663):
         "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
MARK = "x-mcp-header"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_PLAIN = re.compile(r"[\x20-\x7e]*")
_SENTINEL = re.compile(r"=\?base64\?.*\?=")
_MARKABLE = ("string", "integer", "boolean")
# JSON Schema 2020-12 keywords whose values are schemas: one, a list of them, or a map of them.
_ONE = ("items", "contains", "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
        "not", "if", "then", "else", "contentSchema")
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("patternProperties", "dependentSchemas", "$defs", "definitions")


def standard_headers(message: JSONRPCMessage, maps: HeaderMaps) -> dict[str, str]:
    """``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*`` for one POSTed message (none for a response)."""
    if not isinstance(message, JSONRPCRequest | JSONRPCNotification):
        return {}
    headers = {"mcp-method": message.method}
    params = message.params or {}
    name = params.get(NAMED.get(message.method, ""))
    if isinstance(name, str):
        headers["mcp-name"] = encode_value(name)
    if message.method == "tools/call" and isinstance(name, str) and isinstance(params.get("arguments"), dict):
        headers.update(param_headers(maps.get(name, {}), params["arguments"]))
    return headers


def encode_value(value: str) -> str:
    if _PLAIN.fullmatch(value) and value == value.strip() and not _SENTINEL.fullmatch(value):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


def param_headers(marks: HeaderMap, arguments: Mapping[str, Any]) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers of one call: each marked argument present and not null, as text."""
    headers: dict[str, str] = {}
    for path, token in marks.items():
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if isinstance(value, bool):
            headers[f"Mcp-Param-{token}"] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            headers[f"Mcp-Param-{token}"] = encode_value(str(value))
    return headers


def header_map(schema: Any) -> HeaderMap:
    """The marked properties of a valid ``inputSchema`` (see :func:`invalid_header_mark`)."""
    return {path: node[MARK] for path, node in _positions(schema) if path and isinstance(node.get(MARK), str)}


def invalid_header_mark(schema: Any) -> str | None:
    """Why a tool's ``x-mcp-header`` marks are invalid, or ``None`` when they are fine (or absent)."""
    seen: dict[str, str] = {}
    for path, node in _positions(schema):
        if MARK not in node:
            continue
        if not path:
            return f"{MARK} outside a chain of properties"
        where, token = ".".join(path), node[MARK]
        if not isinstance(token, str) or not _TOKEN.fullmatch(token):
            return f"{where}: {MARK} is not a header name"
        if node.get("type") not in _MARKABLE:
            return f"{where}: {MARK} on a property that is not a string, integer or boolean"
        if token.lower() in seen:
            return f"{where}: {MARK} {token!r} repeats that of {seen[token.lower()]}"
        seen[token.lower()] = where
    return None


def _positions(root: Any) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Every schema in ``root`` with its path of ``properties`` names (``None`` once off that plain chain).
    ``$ref`` is never followed, and the walk is a loop over a stack: any finite JSON ends it."""
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), root)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield path, node
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                stack.extend(((*path, name) if path is not None else None, sub) for name, sub in value.items())
            elif key in _ONE:
                stack.append((None, value))
            elif key in _LIST and isinstance(value, list):
                stack.extend((None, sub) for sub in value)
            elif key in _MAP and isinstance(value, dict):
                stack.extend((None, sub) for sub in value.values())
