"""Subscriptions and list caching (MCP 2026-07-28), against real servers on the official SDK: a 2026 session opens
``subscriptions/listen`` and hears of tools another client added; list results are kept for their ``ttlMs`` and
fetched again when the server says the list changed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from mcp_servers import serving

from pycore.mcp import ClientSession


@pytest.fixture(scope="module")
def modern() -> Iterator[str]:
    yield from serving("modern")


@pytest.fixture(scope="module")
def cached() -> Iterator[str]:
    yield from serving("modern-cached")


def sent(mcp: ClientSession, method: str) -> list[dict[str, Any]]:
    return [entry["message"] for entry in mcp.traffic.entries
            if entry["dir"] == "out" and entry["message"].get("method") == method]


def lists(mcp: ClientSession) -> int:
    """How many times the tools were listed (a list is its first page: the one sent with no cursor)."""
    return sum(1 for message in sent(mcp, "tools/list") if "cursor" not in message["params"])


async def until(condition: Any, what: str, seconds: float = 10.0) -> None:
    async def wait() -> None:
        while not condition():
            await asyncio.sleep(0.02)
    try:
        await asyncio.wait_for(wait(), seconds)
    except TimeoutError:
        raise AssertionError(f"{what}: not within {seconds:g} s") from None


async def test_a_tool_another_client_adds_reaches_a_2026_session_on_its_listen_stream(modern: str) -> None:
    changed: list[list[str]] = []
    async with ClientSession(modern, on_tools_changed=lambda tools: changed.append([t.name for t in tools])) as mine:
        await mine.list_tools()
        name = f"late_{id(mine)}"
        async with ClientSession(modern) as other:
            await other.list_tools()
            await other.call_tool("grow", {"name": name})
        await until(lambda: name in [tool.name for tool in mine.tools], "the tool another client added")
        assert changed and name in changed[-1]
        [listen] = sent(mine, "subscriptions/listen")
        assert listen["params"]["notifications"]["toolsListChanged"] is True
        assert sent(mine, "tools/call") == []  # heard on the stream, not found by listing after a call of ours


async def test_list_results_are_kept_for_their_ttl_and_fetched_again_when_the_server_says_they_changed(
        cached: str) -> None:
    async with ClientSession(cached) as mine:
        first = [tool.name for tool in await mine.list_tools()]
        assert [tool.name for tool in await mine.list_tools()] == first
        assert (await mine.call_tool("echo", {"message": "hi"})).text() == "Echo: hi"
        await mine.list_prompts()
        await mine.list_prompts()
        await asyncio.sleep(0.5)  # time for a list that would follow the call (there must be none)
        assert lists(mine) == 1 and len(sent(mine, "prompts/list")) == 1  # fresh for 60 s: asked once each
        name = f"late_{id(mine)}"
        async with ClientSession(cached) as other:
            await other.call_tool("grow", {"name": name})
        await until(lambda: name in [tool.name for tool in mine.tools], "the tool another client added")
        assert lists(mine) == 2
        assert name in [tool.name for tool in await mine.list_tools()] and lists(mine) == 2  # the new list, kept


async def test_without_a_ttl_a_2026_session_still_hears_of_a_tool_its_own_call_added(modern: str) -> None:
    """T-P3 holds: a tool a call added is listed (and asks before its first run), now by the listen stream."""
    async with ClientSession(modern) as mine:
        await mine.list_tools()
        name = f"mine_{id(mine)}"
        await mine.call_tool("grow", {"name": name})
        await until(lambda: name in [tool.name for tool in mine.tools], "the tool our call added")
