"""Pure logic of the MCP client: JSON-RPC framing, content mapping, the pagination guard, the schema
check, and a whole session over the replay transport. Runs in CPython and inside Pyodide."""

from __future__ import annotations

import json

import mcp_types as t
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pycore.http.origin import same_origin
from pycore.http.replay import Recording, ReplayTransport
from pycore.mcp import ClientSession, MCPPaginationError, MCPProtocolError, jsonrpc, map_result
from pycore.mcp.pagination import CursorGuard
from pycore.mcp.schema import MAX_DEPTH, check

pytestmark = pytest.mark.pyodide
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="


def test_framing_round_trip() -> None:
    sent = jsonrpc.encode(jsonrpc.request(7, "tools/list", {"cursor": "c"}))
    assert json.loads(sent) == {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"cursor": "c"}}
    assert jsonrpc.parse(b'[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"x"}]')[1].method == "x"


@pytest.mark.parametrize("body", [b"", b"{", b'{"id": 1}', b'{"jsonrpc": "1.0", "id": 1, "result": {}}',
                                  b'{"jsonrpc": "2.0", "id": 1, "result": 5}', b"42"])
def test_malformed_json_rpc_is_a_protocol_error(body: bytes) -> None:
    with pytest.raises(MCPProtocolError):
        jsonrpc.parse(body)


@given(st.binary(max_size=64))
def test_parse_never_raises_anything_else(body: bytes) -> None:
    try:
        jsonrpc.parse(body)
    except MCPProtocolError:
        pass


def test_content_mapping() -> None:
    result = t.CallToolResult.model_validate({"content": [
        {"type": "text", "text": "a"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "image", "data": PNG, "mimeType": "image/svg+xml"},  # SVG is never an image for the model
        {"type": "image", "data": "***", "mimeType": "image/png"},
        {"type": "resource_link", "uri": "http://10.0.0.1/secret", "name": "s"},
    ], "structuredContent": {"n": 1}})
    out = map_result(result, {"type": "object", "required": ["n"]})
    assert [p["type"] for p in out.content] == ["text", "image", "text", "text", "text"]
    assert "invalid base64" in out.content[3]["text"] and "not fetched" in out.content[4]["text"]
    assert out.structured == {"n": 1} and out.schema_violation is None and not out.is_error


def test_structured_only_becomes_text() -> None:
    out = map_result(t.CallToolResult(content=[], structured_content={"x": [1]}))
    assert out.text() == '{"x": [1]}'


@pytest.mark.parametrize(("value", "schema", "bad"), [
    ({"a": 1}, {"type": "object", "properties": {"a": {"type": "string"}}}, True),
    ({"a": "x"}, {"type": "object", "properties": {"a": {"type": "string"}}}, False),
    ([1, "x"], {"type": "array", "items": {"type": "integer"}}, True),
    (True, {"type": "integer"}, True),
    (2.0, {"type": "integer"}, False),
    ("c", {"enum": ["a", "b"]}, True),
    ({}, {"required": ["k"]}, True),
    ({"k": None}, {"type": "object", "properties": {"k": {"type": ["string", "null"]}}}, False),
])
def test_schema_check(value: object, schema: dict, bad: bool) -> None:
    assert (check(value, schema) is not None) == bad


COUNTED = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
           "$defs": {"count": {"type": "integer", "minimum": 0}, "label": {"$ref": "#/$defs/text"},
                     "text": {"type": "string"}},
           "properties": {"n": {"$ref": "#/$defs/count"}, "tag": {"$ref": "#/$defs/label"},
                          "id": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                          "one": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
                          "both": {"allOf": [{"type": "object"}, {"required": ["k"]}]},
                          "never": {"not": {"type": "string"}},
                          "far": {"$ref": "https://schemas.example/far.json"}},
           "required": ["n"]}


@pytest.mark.parametrize(("value", "problem"), [
    ({"n": 3, "tag": "x", "id": 7, "one": 1.5, "both": {"k": 1}, "never": 1, "far": "any"}, None),
    ({"n": "three"}, "$.n: expected integer, got str"),  # through $ref into $defs
    ({"n": 1, "tag": 5}, "$.tag: expected string, got int"),  # a $ref to a $ref
    ({"n": 1, "id": True}, "$.id: matches none of anyOf"),
    ({"n": 1, "one": 2}, "$.one: matches 2 of oneOf, not exactly one"),
    ({"n": 1, "both": {}}, "$.both: missing required property 'k'"),
    ({"n": 1, "never": "s"}, "$.never: matches what not forbids"),
])
def test_a_2020_12_schema_is_checked_as_sent_refs_and_composition_included(value: object, problem: str) -> None:
    assert check(value, COUNTED) == problem


def test_a_schema_referring_to_itself_or_nested_past_the_bound_is_checked_only_so_far() -> None:
    looping = {"$ref": "#", "type": "object"}
    assert check({}, looping) is None
    assert check(1, {"anyOf": [{"$ref": "#"}, {"$ref": "#"}]}) is None  # 2 ** 64 paths, cut by the budget
    # Four times the bound: deep enough that an unbounded walk would claim the string is wrong, while a 5,000-deep
    # structure overflowed Pyodide's wasm stack in pytest itself (a fatal error, not a RecursionError).
    depth = 4 * MAX_DEPTH
    deep: dict[str, object] = {"type": "integer"}
    for _ in range(depth):
        deep = {"type": "array", "items": deep}
    value: object = "x"
    for _ in range(depth):
        value = [value]
    assert check(value, deep) is None  # past MAX_DEPTH nothing more is claimed, and nothing crashes


def test_cursor_guard() -> None:
    guard = CursorGuard("tools/list", max_pages=3)
    assert guard.next("a") == "a" and guard.next("b") == "b"
    with pytest.raises(MCPPaginationError, match="more than 3"):
        guard.next("c")
    repeat = CursorGuard("x")
    repeat.next("a")
    with pytest.raises(MCPPaginationError, match="repeated"):
        repeat.next("a")


def test_same_origin() -> None:
    assert same_origin("http://h:80/a", "http://h/b") and same_origin("https://h/a", "https://h:443/")
    assert not same_origin("http://h/a", "https://h/a") and not same_origin("http://h/", "http://h.evil/")


def _json(body: dict) -> Recording:
    return Recording(json.dumps(body).encode())


async def test_session_over_replay_with_sse_and_pages() -> None:
    init = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                                                   "serverInfo": {"name": "r", "version": "1"}}}
    page1 = {"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "a", "inputSchema": {"type": "object"}}],
                                                    "nextCursor": "p2"}}
    page2 = {"jsonrpc": "2.0", "id": 3, "result": {"tools": [{"name": "b", "inputSchema": {"type": "object"}}]}}
    sse = f"id: 1\ndata: \n\nevent: message\ndata: {json.dumps(page2)}\n\n".encode()
    transport = ReplayTransport([
        Recording(json.dumps(init).encode(), headers={"mcp-session-id": "S"}),
        Recording(b"", status=202),  # notifications/initialized
        Recording(b"", status=405),  # no GET stream
        _json(page1),
        Recording(sse, content_type="text/event-stream", chunk_size=7),
        Recording(b"", status=405),  # DELETE refused: fine
    ])
    async with ClientSession("https://mcp.example/mcp", http=transport, discover=False) as mcp:  # a 2025 record
        assert [tool.name for tool in await mcp.list_tools()] == ["a", "b"]
    sent = transport.requests
    assert [r.method for r in sent] == ["POST", "POST", "GET", "POST", "POST", "DELETE"]
    assert all(r.headers.get("mcp-session-id") == "S" for r in sent[1:])
    assert all(r.headers.get("mcp-protocol-version") == "2025-11-25" for r in sent[1:])
    assert json.loads(sent[4].body or b"")["params"] == {"cursor": "p2"}
