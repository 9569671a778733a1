"""Both revisions, chosen per server (MCP 2026-07-28 where offered, the initialize handshake otherwise), and Multi
Round-Trip Requests, against real servers on the official SDK: one speaking only 2026-07-28, one as older ones are."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcp_servers import serving

from pycore.http import Request, Response, Transport
from pycore.http.httpx import HttpxTransport
from pycore.mcp import ClientSession, MCPRPCError

MODERN_META = "io.modelcontextprotocol/protocolVersion"


@pytest.fixture(scope="module")
def modern() -> Iterator[str]:
    yield from serving("modern")


@pytest.fixture(scope="module")
def older() -> Iterator[str]:
    yield from serving("http")


def sent(mcp: ClientSession, method: str | None = None) -> list[dict[str, Any]]:
    messages = [entry["message"] for entry in mcp.traffic.entries if entry["dir"] == "out"]
    return [m for m in messages if method is None or m.get("method") == method]


def answering(*contents: dict[str, Any], asked: list[str]) -> Any:
    replies = iter(contents)

    async def ask(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": next(replies)}

    return ask


async def test_a_server_speaking_only_2026_07_28_is_spoken_to_in_it(modern: str) -> None:
    async with ClientSession(modern) as mcp:
        assert mcp.protocol_version == "2026-07-28" and mcp.modern == "2026-07-28"
        assert mcp.server is not None and mcp.server.server_info.name == "orizuru-test"
        await mcp.list_tools()
        assert (await mcp.call_tool("echo", {"message": "hi"})).text() == "Echo: hi"
        assert (await mcp.get_prompt("greet", {"name": "Ada"})).messages
    methods = [m.get("method") for m in sent(mcp)]
    assert "initialize" not in methods and methods[0] == "server/discover"
    for message in sent(mcp):  # stateless: every request carries the version, our info and capabilities
        meta = message["params"]["_meta"]
        assert meta[MODERN_META] == "2026-07-28" and meta["io.modelcontextprotocol/clientInfo"]["name"] == "orizuru"
        assert "io.modelcontextprotocol/clientCapabilities" in meta


async def test_an_older_server_gets_the_initialize_handshake_after_the_probe(older: str) -> None:
    async with ClientSession(older) as mcp:
        assert mcp.protocol_version == "2025-11-25" and mcp.modern is None
        assert (await mcp.call_tool("echo", {"message": "hi"})).text() == "Echo: hi"
    methods = [m.get("method") for m in sent(mcp)]
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]
    assert MODERN_META not in sent(mcp, "tools/call")[0]["params"].get("_meta", {})


async def test_two_questions_in_one_round_are_asked_and_the_call_sent_again_with_answers_and_state(
        modern: str) -> None:
    asked: list[str] = []
    ask = answering({"name": "Ada", "guests": 3}, {"window": True}, asked=asked)
    async with ClientSession(modern, on_elicit=ask) as mcp:
        await mcp.list_tools()
        out = await mcp.call_tool("reserve", {"restaurant": "Kiln"})
    assert out.text() == "reserved Kiln for 3 under Ada, window True"
    assert sorted(asked) == ["Where would you like to sit at Kiln?", "Who is coming to Kiln?"]
    first, again = sent(mcp, "tools/call")
    assert "inputResponses" not in first["params"] and len(again["params"]["inputResponses"]) == 2
    assert again["params"]["requestState"] and again["id"] != first["id"]


async def test_a_question_that_depends_on_an_answer_takes_two_rounds(modern: str) -> None:
    asked: list[str] = []
    ask = answering({"name": "Bo"}, {"window": False}, asked=asked)
    async with ClientSession(modern, on_elicit=ask) as mcp:
        out = await mcp.call_tool("reserve_later", {"restaurant": "Kiln"})
    assert out.text() == "reserved Kiln, window False"
    assert asked == ["Who is coming to Kiln?", "A table by the window for Bo?"]
    assert len(sent(mcp, "tools/call")) == 3


async def test_the_same_tool_on_an_older_server_asks_with_its_own_requests(older: str) -> None:
    asked: list[str] = []
    ask = answering({"name": "Ada", "guests": 3}, {"window": True}, asked=asked)
    async with ClientSession(older, on_elicit=ask) as mcp:
        out = await mcp.call_tool("reserve", {"restaurant": "Kiln"})
    assert out.text() == "reserved Kiln for 3 under Ada, window True" and len(asked) == 2
    assert len(sent(mcp, "tools/call")) == 1


class Tampering(Transport):
    """Changes the requestState of every call sent again (a proxy that meddles, or a client that would)."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner

    async def send(self, request: Request) -> Response:
        body = json.loads(request.body or b"null")
        if isinstance(body, dict) and "requestState" in (body.get("params") or {}):
            body["params"]["requestState"] = body["params"]["requestState"][:-4] + "AAAA"
            request.body = json.dumps(body).encode()
        return await self.inner.send(request)


async def test_a_tampered_state_is_the_servers_error_shown_as_it_said_it(modern: str) -> None:
    ask = answering({"name": "Ada"}, {"window": True}, asked=[])
    http = HttpxTransport()
    try:
        async with ClientSession(modern, on_elicit=ask, http=Tampering(http)) as mcp:
            with pytest.raises(MCPRPCError) as refused:
                await mcp.call_tool("reserve", {"restaurant": "Kiln"})
    finally:
        await http.aclose()
    assert refused.value.code == -32602 and "state" in refused.value.rpc_message.lower(), refused.value
