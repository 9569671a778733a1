"""Subscriptions and list caching (MCP 2026-07-28).

A 2026-07-28 server keeps no session, so it cannot send a notification on one: a client that wants to hear of
changes opens ``subscriptions/listen``, a request whose answer is the stream of them. :class:`Listener` keeps one
open for a :class:`~pycore.mcp.session.ClientSession` that speaks 2026-07-28, asking for what the server's
capabilities say it tells (tool, prompt and resource list changes); the server's first message on it,
``notifications/subscriptions/acknowledged``, names what it agreed to send (:attr:`Listener.honored`), and each
change then reaches the session as the same notification an older server sends on its session
(``notifications/tools/list_changed``, …), which lists again. A stream that ends (the server's graceful close,
or a drop) is opened again after a pause, and the lists are fetched again, since what changed meanwhile was not
heard; after :data:`MAX_FAILURES` attempts in a row that were never acknowledged (or a server that refuses the
method) the session stops listening and lists the tools again after each call instead, as it does for a server
that tells of no changes.

List results carry ``ttlMs`` (how long they stay fresh) and ``cacheScope`` on 2026-07-28: :class:`ListCache`
keeps a list for the smallest ``ttlMs`` of its pages (at most :data:`MAX_TTL_MS`; 0 or none: not kept), and a
change heard on the stream drops it. The cache lives in one session, which is one user's connection to one
server with one set of credentials, so a ``"private"`` result is never served to anyone else; nothing is shared
between sessions, so ``"public"`` widens nothing either. Hints count only on 2026-07-28 (an older server's list
is never kept): the SDKs do the same.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_types.jsonrpc import JSONRPCNotification

from pycore.mcp.errors import MCPError, MCPRPCError

MAX_TTL_MS = 24 * 60 * 60 * 1000  # the longest a list is kept, whatever the server says (the SDKs' cap)
MAX_FAILURES = 5  # listen attempts in a row never acknowledged before the session stops listening
RETRY_DELAYS = (1.0, 2.0, 5.0, 10.0, 30.0)  # seconds before opening the stream again, by failures in a row
LISTEN = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
CHANGES = {  # the filter's key, the notification, the list it makes stale
    "toolsListChanged": ("notifications/tools/list_changed", "tools/list"),
    "promptsListChanged": ("notifications/prompts/list_changed", "prompts/list"),
    "resourcesListChanged": ("notifications/resources/list_changed", "resources/list"),
}
STALE = {notification: method for notification, method in CHANGES.values()}


class ListCache:
    """List results kept while their ``ttlMs`` lasts, by method; ``clock`` is seconds (monotonic)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._entries: dict[str, tuple[float, list[Any]]] = {}

    def get(self, method: str) -> list[Any] | None:
        entry = self._entries.get(method)
        if entry is None or entry[0] <= self._clock():
            self._entries.pop(method, None)
            return None
        return list(entry[1])

    def put(self, method: str, items: list[Any], pages: list[dict[str, Any]]) -> None:
        """Keep ``items`` for the smallest ``ttlMs`` of the ``pages`` they came in (a page without one: not kept)."""
        ttls = [ttl for page in pages if isinstance(ttl := page.get("ttlMs"), int) and not isinstance(ttl, bool)]
        if not ttls or len(ttls) != len(pages) or min(ttls) <= 0:
            self._entries.pop(method, None)
            return
        ttl_ms = min(*ttls, MAX_TTL_MS)
        self._entries[method] = (self._clock() + ttl_ms / 1000, list(items))

    def evict(self, method: str) -> None:
        self._entries.pop(method, None)


def wanted(capabilities: Any) -> dict[str, bool]:
    """The listen filter for what the server's capabilities say it tells: list changes it announces."""
    out: dict[str, bool] = {}
    for key, kind in (("toolsListChanged", "tools"), ("promptsListChanged", "prompts"),
                      ("resourcesListChanged", "resources")):
        capability = getattr(capabilities, kind, None)
        if capability is not None and capability.list_changed:
            out[key] = True
    return out


class Listener:
    """One ``subscriptions/listen`` stream kept open for a session (see the module's docstring).

    ``request(params)`` sends the listen request and returns when its stream ends (its result: the server closed
    it) or raises (it dropped, or was refused); ``refetch()`` lists again what the stream tells of.
    """

    def __init__(self, request: Callable[[dict[str, Any]], Awaitable[Any]], refetch: Callable[[], Any],
                 notifications: dict[str, bool], *, delays: tuple[float, ...] = RETRY_DELAYS) -> None:
        self._request = request
        self._refetch = refetch
        self.notifications = notifications
        self.honored: dict[str, bool] | None = None  # what the server agreed to send, once it acknowledged
        self.stopped = False  # given up: the session lists after each call instead
        self._delays = delays
        self._acknowledged = False  # once: a later acknowledgment is a stream opened again

    def hears(self, key: str) -> bool:
        """Whether the open stream brings the changes ``key`` names (``toolsListChanged``, …)."""
        return not self.stopped and bool(self.honored and self.honored.get(key))

    def notified(self, message: JSONRPCNotification) -> None:
        if message.method == ACKNOWLEDGED:
            given = (message.params or {}).get("notifications")
            self.honored = {key: True for key in CHANGES if isinstance(given, dict) and given.get(key) is True}
            if self._acknowledged:
                self._refetch()  # what changed while no stream was open was not heard
            self._acknowledged = True

    async def run(self) -> None:
        failures = 0
        while failures < MAX_FAILURES:
            self.honored = None
            try:
                await self._request({"notifications": self.notifications})
            except MCPRPCError:
                break  # refused (an older handler, a limit): the session lists after each call instead
            except MCPError:
                pass
            failures = 0 if self.honored is not None else failures + 1
            self.honored = None
            await asyncio.sleep(self._delays[min(failures, len(self._delays) - 1)])
        self.stopped = True
        self.honored = None
