"""Answers the loop waits for from outside: approvals and results of the page's JavaScript tools.

The loop registers a call id *before* it tells the page, so an answer can never arrive too early;
the page's answer (``chat.approve``, ``chat.page_tool_result``) resolves it.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar


class UnknownCallError(LookupError):
    """An answer for a call id nobody is waiting for (already answered, cancelled, or made up)."""

    error_code: ClassVar[str] = "unknown_call"


class Pending:
    def __init__(self, what: str) -> None:
        self.what = what
        self._futures: dict[str, asyncio.Future[Any]] = {}

    def expect(self, call_id: str) -> asyncio.Future[Any]:
        if call_id in self._futures and not self._futures[call_id].done():
            raise ValueError(f"call {call_id!r} is already waiting for {self.what}")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._futures[call_id] = future
        future.add_done_callback(lambda done: self._forget(call_id, done))
        return future

    def _forget(self, call_id: str, future: asyncio.Future[Any]) -> None:
        if self._futures.get(call_id) is future:  # not a later wait for the same id (a question's second stage)
            del self._futures[call_id]

    def resolve(self, call_id: str, value: Any) -> None:
        future = self._futures.get(call_id)
        if future is None or future.done():
            raise UnknownCallError(f"no tool call {call_id!r} is waiting for {self.what}")
        future.set_result(value)

    def waiting(self) -> list[str]:
        return [call_id for call_id, future in self._futures.items() if not future.done()]
