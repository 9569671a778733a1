"""Answers the loop waits for from outside: approvals and results of the page's JavaScript tools.

The loop registers a call id *before* it tells the page, so an answer can never arrive too early;
the page's answer (``chat.approve``, ``chat.page_tool_result``) resolves it.

Runs going on at once (Compare asks several models one message) share the worker's waits, and two of them may
name a call alike (Gemini and Ollama make ids up from the call itself): :meth:`Pending.for_run` is one run's view,
keyed by the page's ``run_id`` and the call id, so an answer names its run and never lands on another's call.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar


class UnknownCallError(LookupError):
    """An answer for a call id nobody is waiting for (already answered, cancelled, or made up)."""

    error_code: ClassVar[str] = "unknown_call"


class Pending:
    def __init__(self, what: str, *, run: str | None = None,
                 futures: dict[tuple[str | None, str], asyncio.Future[Any]] | None = None) -> None:
        self.what = what
        self.run = run  # whose calls this view waits for: a run's id, or None (callers that name no run)
        self._futures: dict[tuple[str | None, str], asyncio.Future[Any]] = {} if futures is None else futures

    def for_run(self, run: str | None) -> Pending:
        """The waits of one run (``run_id`` of ``chat.run``), sharing this one's table: ``None`` is this view."""
        return self if run == self.run else Pending(self.what, run=run, futures=self._futures)

    def expect(self, call_id: str) -> asyncio.Future[Any]:
        key = (self.run, call_id)
        if key in self._futures and not self._futures[key].done():
            raise ValueError(f"call {call_id!r} is already waiting for {self.what}")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._futures[key] = future
        future.add_done_callback(lambda done: self._forget(key, done))
        return future

    def _forget(self, key: tuple[str | None, str], future: asyncio.Future[Any]) -> None:
        if self._futures.get(key) is future:  # not a later wait for the same id (a question's second stage)
            del self._futures[key]

    def resolve(self, call_id: str, value: Any) -> None:
        future = self._futures.get((self.run, call_id))
        if future is None or future.done():
            raise UnknownCallError(f"no tool call {call_id!r} is waiting for {self.what}")
        future.set_result(value)

    def waiting(self) -> list[str]:
        return [call_id for (run, call_id), future in self._futures.items() if run == self.run and not future.done()]
