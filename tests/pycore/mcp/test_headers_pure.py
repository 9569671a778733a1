"""The 2026-07-28 standard headers and x-mcp-header marks (pycore.mcp.headers), with no network."""

from __future__ import annotations

import pytest

from pycore.mcp import jsonrpc
from pycore.mcp.headers import header_map, invalid_header_mark, standard_headers

SCHEMA = {"type": "object", "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"},
    "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
    "deep": {"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Id"}}},
}}


def test_a_call_names_its_method_tool_and_marked_arguments_encoding_what_a_header_cannot_hold() -> None:
    maps = {"route": header_map(SCHEMA)}
    call = jsonrpc.request(1, "tools/call", {"name": "route", "arguments": {
        "region": " 東京 ", "verbose": False, "deep": {"id": 7}}})
    headers = standard_headers(call, maps)
    assert headers["mcp-method"] == "tools/call" and headers["mcp-name"] == "route"
    assert headers["Mcp-Param-Region"] == "=?base64?IOadseS6rCA=?="
    assert headers["Mcp-Param-Verbose"] == "false" and headers["Mcp-Param-Id"] == "7"
    nulls = jsonrpc.request(2, "tools/call", {"name": "route", "arguments": {"region": None}})
    assert not any(name.startswith("Mcp-Param") for name in standard_headers(nulls, maps))
    assert standard_headers(jsonrpc.request(3, "tools/list"), maps) == {"mcp-method": "tools/list"}


@pytest.mark.parametrize("prop", [
    {"type": "string", "x-mcp-header": ""}, {"type": "number", "x-mcp-header": "Score"},
    {"type": "object", "x-mcp-header": "Data"}, {"type": "string", "x-mcp-header": "My Region"},
    {"type": "string", "x-mcp-header": "Région"}])
def test_an_invalid_mark_is_named(prop: dict[str, object]) -> None:
    assert invalid_header_mark({"type": "object", "properties": {"p": prop}}) is not None


def test_the_same_header_twice_or_off_the_properties_chain_is_invalid_and_refs_are_never_followed() -> None:
    twice = {"properties": {"a": {"type": "string", "x-mcp-header": "My"},
                            "b": {"type": "string", "x-mcp-header": "my"}}}
    assert "repeats" in (invalid_header_mark(twice) or "")
    nested = {"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}
    assert invalid_header_mark(nested) is not None
    assert invalid_header_mark({"properties": {"a": {"$ref": "https://evil.example/s.json"}}}) is None
    assert invalid_header_mark(SCHEMA) is None


def test_a_task_request_names_its_task() -> None:
    """The tasks extension (SEP-2663): tasks/get, tasks/update and tasks/cancel carry Mcp-Name: <taskId>."""
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        headers = standard_headers(jsonrpc.request(1, method, {"taskId": "t-7", "inputResponses": {}}), {})
        assert headers == {"mcp-method": method, "mcp-name": "t-7"}
