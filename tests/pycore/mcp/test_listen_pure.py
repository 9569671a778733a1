"""List caching and the listen stream's bookkeeping (pycore.mcp.listen), with no network."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as t
import pytest
from mcp_types.jsonrpc import JSONRPCNotification

from pycore.mcp.errors import MCPConnectionLostError, MCPRPCError
from pycore.mcp.listen import MAX_FAILURES, MAX_TTL_MS, ListCache, Listener, wanted

pytestmark = pytest.mark.pyodide


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_list_is_kept_for_the_smallest_ttl_of_its_pages_and_no_longer() -> None:
    clock = Clock()
    cache = ListCache(clock)
    cache.put("tools/list", ["a", "b"], [{"ttlMs": 5000}, {"ttlMs": 2000}])
    assert cache.get("tools/list") == ["a", "b"]
    clock.now += 1.999
    assert cache.get("tools/list") == ["a", "b"]
    clock.now += 0.002
    assert cache.get("tools/list") is None


@pytest.mark.parametrize("pages", [[{}], [{"ttlMs": 0}], [{"ttlMs": 5000}, {}], [{"ttlMs": True}],
                                   [{"ttlMs": "5000"}], [{"ttlMs": -1}], []])
def test_a_list_without_a_fresh_ttl_on_every_page_is_not_kept(pages: list[dict[str, Any]]) -> None:
    cache = ListCache(Clock())
    cache.put("tools/list", ["old"], [{"ttlMs": 5000}])
    cache.put("tools/list", ["new"], pages)
    assert cache.get("tools/list") is None  # and the older one is gone with it


def test_a_days_long_ttl_is_cut_to_one_day_and_a_change_drops_the_list() -> None:
    clock = Clock()
    cache = ListCache(clock)
    cache.put("prompts/list", ["p"], [{"ttlMs": 10 * MAX_TTL_MS, "cacheScope": "public"}])
    clock.now += MAX_TTL_MS / 1000 + 1
    assert cache.get("prompts/list") is None
    cache.put("prompts/list", ["p"], [{"ttlMs": 1000}])
    cache.evict("prompts/list")
    assert cache.get("prompts/list") is None


def test_the_filter_asks_for_the_changes_the_server_announces() -> None:
    capabilities = t.ServerCapabilities(tools=t.ToolsCapability(list_changed=True), prompts=t.PromptsCapability(),
                                        resources=t.ResourcesCapability(list_changed=True))
    assert wanted(capabilities) == {"toolsListChanged": True, "resourcesListChanged": True}
    assert wanted(t.ServerCapabilities()) == {}


def acknowledged(**notifications: bool) -> JSONRPCNotification:
    return JSONRPCNotification(jsonrpc="2.0", method="notifications/subscriptions/acknowledged",
                               params={"notifications": notifications})


async def test_a_stream_opened_again_is_acknowledged_and_the_lists_fetched_again() -> None:
    refetched: list[int] = []
    listener: Listener

    async def request(params: dict[str, Any]) -> Any:
        assert params == {"notifications": {"toolsListChanged": True}}
        listener.notified(acknowledged(toolsListChanged=True, promptsListChanged=True))
        assert listener.hears("toolsListChanged") and listener.hears("promptsListChanged")
        if len(opened) < 2:
            opened.append(1)
            raise MCPConnectionLostError("dropped")  # a drop: opened again after the pause
        opened.append(1)
        raise MCPRPCError(-32601, "no such method")  # then refused: the session lists after each call instead

    opened: list[int] = []
    listener = Listener(request, lambda: refetched.append(1), {"toolsListChanged": True}, delays=(0.0,))
    await asyncio.wait_for(listener.run(), 5)
    assert len(opened) == 3 and len(refetched) == 2  # the first acknowledgment fetches nothing: the lists are new
    assert listener.stopped and not listener.hears("toolsListChanged")


async def test_a_stream_never_acknowledged_is_given_up_after_so_many_tries() -> None:
    tries: list[int] = []

    async def request(params: dict[str, Any]) -> Any:
        tries.append(1)
        raise MCPConnectionLostError("dropped")

    listener = Listener(request, lambda: None, {"toolsListChanged": True}, delays=(0.0,))
    await asyncio.wait_for(listener.run(), 5)
    assert len(tries) == MAX_FAILURES and listener.stopped
