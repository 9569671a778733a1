"""Tasks: the ``io.modelcontextprotocol/tasks`` extension (SEP-2663) on MCP 2026-07-28.

A session that speaks 2026-07-28 declares the extension in each request's client capabilities; a server may then
answer a long ``tools/call`` with a task instead of its result: ``resultType: "task"`` and the task's
``taskId``, ``status``, ``ttlMs``, ``pollIntervalMs``. :func:`follow` asks ``tasks/get`` every ``pollIntervalMs``
(bounded: :data:`MIN_POLL` … :data:`MAX_POLL` seconds) and reports each status and ``statusMessage`` as it goes
(``report``: the tool card's progress), until the task ends:

- ``completed``: its ``result``, the call's result as if it had been answered at once;
- ``failed``: its ``error`` raised as the server's JSON-RPC error (:class:`~pycore.mcp.errors.MCPRPCError`);
- ``cancelled`` (by the server): an error saying so;
- ``input_required``: its ``inputRequests`` are put to the user as a server's own requests are (a form, a link,
  sampling), and the answers sent with ``tasks/update``; each asked once.

``started`` is told the created task once, before the first poll: the page keeps it with the message as the call's
task handle, so that a reload, a closed tab or a crash can pick the task up again with :func:`resume`, which asks
``tasks/get`` for its state first and follows it from there; a server that no longer knows the task (expired,
forgotten on a restart) answers that ``tasks/get`` with an error, raised as a sentence that says so.

A call the user stops (the coroutine cancelled: Stop, the tool's time limit) sends ``tasks/cancel`` for its task
before it ends, so the server stops working for nobody. A ``tasks/get`` that answers for another task, or with a
status the extension does not have, is a protocol error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_types.jsonrpc import INTERNAL_ERROR

from pycore.mcp.errors import MCPProtocolError, MCPRPCError

EXTENSION = "io.modelcontextprotocol/tasks"
TERMINAL = ("completed", "failed", "cancelled")
STATUSES = ("working", "input_required", *TERMINAL)
DEFAULT_POLL = 1.0  # seconds between tasks/get when the server suggests nothing
MIN_POLL = 0.1
MAX_POLL = 30.0


def is_task(raw: dict[str, Any]) -> bool:
    return raw.get("resultType") == "task"


async def follow(
    created: dict[str, Any], *, url: str,
    get: Callable[[str], Awaitable[dict[str, Any]]],
    update: Callable[[str, dict[str, Any]], Awaitable[Any]],
    cancel: Callable[[str], None],
    answer: Callable[[str, Any], Awaitable[dict[str, Any]]],
    report: Callable[[str, str | None], None] | None = None,
    started: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """The task's result, once it completes (see the module's docstring)."""
    task_id = created.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise MCPProtocolError(f"tools/call: {url} answered with a task that has no taskId")
    if started is not None:
        started(created)
    task, answered = created, set[str]()
    try:
        while True:
            status = _status(task, task_id, url)
            if status in TERMINAL:
                return _ended(task, status, url)
            message = task.get("statusMessage")
            if report is not None:
                report(status, message if isinstance(message, str) else None)
            asked = task.get("inputRequests") if status == "input_required" else None
            pending = {key: value for key, value in asked.items() if key not in answered} \
                if isinstance(asked, dict) else {}
            if pending:
                responses = {key: await answer(key, request) for key, request in pending.items()}
                answered.update(responses)
                await update(task_id, responses)
            else:
                await asyncio.sleep(_interval(task))
            task = await get(task_id)
    except asyncio.CancelledError:
        cancel(task_id)
        raise


async def resume(
    task_id: str, *, url: str,
    get: Callable[[str], Awaitable[dict[str, Any]]],
    update: Callable[[str, dict[str, Any]], Awaitable[Any]],
    cancel: Callable[[str], None],
    answer: Callable[[str, Any], Awaitable[dict[str, Any]]],
    report: Callable[[str, str | None], None] | None = None,
) -> dict[str, Any]:
    """The result of a task made before (its handle kept across a reload), followed from its state now."""
    try:
        task = await get(task_id)
    except MCPRPCError as e:
        raise MCPRPCError(e.code, f"the server no longer has task {task_id[:80]!r} (it may have expired): "
                                  f"{e.rpc_message}", e.data, url=url) from e
    return await follow({"taskId": task_id, **task}, url=url, get=get, update=update, cancel=cancel, answer=answer,
                        report=report)


def _status(task: dict[str, Any], task_id: str, url: str) -> str:
    if task.get("taskId", task_id) != task_id:
        raise MCPProtocolError(f"tasks/get: {url} answered for task {str(task.get('taskId'))[:80]!r}, "
                               f"not {task_id[:80]!r}")
    status = task.get("status")
    if status not in STATUSES:
        raise MCPProtocolError(f"tasks/get: {url} gave task {task_id[:80]!r} the status {str(status)[:40]!r}, "
                               f"which is none of {', '.join(STATUSES)}")
    return str(status)


def _ended(task: dict[str, Any], status: str, url: str) -> dict[str, Any]:
    if status == "completed":
        result = task.get("result")
        if not isinstance(result, dict):
            raise MCPProtocolError(f"tasks/get: {url} completed a task without its result")
        return result
    if status == "failed":
        given = task.get("error")
        error: dict[str, Any] = given if isinstance(given, dict) else {}
        code, message = error.get("code"), error.get("message")
        raise MCPRPCError(code if isinstance(code, int) else INTERNAL_ERROR,
                          message if isinstance(message, str) else "the task failed", error.get("data"), url=url)
    raise MCPRPCError(INTERNAL_ERROR, "the server cancelled the task", url=url)


def _interval(task: dict[str, Any]) -> float:
    suggested = task.get("pollIntervalMs")
    if not isinstance(suggested, int | float) or isinstance(suggested, bool) or suggested <= 0:
        return DEFAULT_POLL
    return min(max(suggested / 1000, MIN_POLL), MAX_POLL)
