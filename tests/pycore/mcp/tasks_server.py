"""A real MCP server on the official SDK that answers long calls as tasks (the ``io.modelcontextprotocol/tasks``
extension, SEP-2663, on MCP 2026-07-28), for the client tests and the journeys.

The SDK speaks 2026-07-28 and lets an extension own a result's shape (``resultType: "task"``), but has no tasks of
its own: this server adds them with the SDK's own seams, as a server author would — an :class:`MCPServer` whose
``tools/call`` starts a task for a task-supporting tool when the request declares the extension (and runs it
straight away when it does not), and ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` registered on its
low-level server. The wire follows SEP-2663 as the official conformance suite checks it (its ``tasks-*`` server
scenarios): a flat ``CreateTaskResult``, ``tasks/get`` inlining ``result`` or ``error``, ``input_required`` with
``inputRequests`` answered by ``tasks/update``, ``tasks/cancel`` acknowledged with an empty result.

Tools: ``render(frames)`` works a frame at a time (each ``FRAME_SECONDS``, or until the test opens ``gate``) and
says which in its ``statusMessage``; ``publish(title)`` asks the user to confirm (a form) before it finishes;
``explode()`` ends ``failed`` with a JSON-RPC error; ``greet(name)`` is an ordinary call.

    app = tasks_app(state)                   # ASGI; tasks_app(state, origin) answers CORS for a browser page
    state.calls, state.cancelled, state.gate
"""

from __future__ import annotations

import asyncio
import threading
import uuid
import warnings
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolRequestParams, RequestParams
from mcp_servers import modern_only, refusing
from pydantic import ConfigDict

EXTENSION = "io.modelcontextprotocol/tasks"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
TASK_TOOLS = ("render", "publish", "explode")
FRAME_SECONDS = 0.3
POLL_MS = 100
TTL_MS = 600_000
CORS_HEADERS = ["Content-Type", "Authorization", "Mcp-Session-Id", "MCP-Protocol-Version", "Last-Event-ID",
                "Mcp-Method", "Mcp-Name"]


@dataclass
class TasksState:
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    gate: threading.Event | None = None  # set: render's frames wait for it (a test holds the task running)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    runners: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    answers: dict[str, asyncio.Queue[dict[str, Any]]] = field(default_factory=dict)


class TaskParams(RequestParams):
    model_config = ConfigDict(extra="allow")
    task_id: str
    input_responses: dict[str, Any] | None = None


def now() -> str:
    return datetime.now(UTC).isoformat()


def declared(params: CallToolRequestParams) -> bool:
    meta = params.meta or {}
    capabilities = meta.get(CAPABILITIES) if isinstance(meta, dict) else getattr(meta, CAPABILITIES, None)
    return isinstance(capabilities, dict) and EXTENSION in (capabilities.get("extensions") or {})


def text(value: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": error, "resultType": "complete"}


class TasksServer(MCPServer):
    def __init__(self, state: TasksState) -> None:
        super().__init__(name="orizuru-tasks", version="1.0")
        self.state = state
        low = self._lowlevel_server
        low.add_request_handler("tasks/get", TaskParams, self._get)
        low.add_request_handler("tasks/update", TaskParams, self._update)
        low.add_request_handler("tasks/cancel", TaskParams, self._cancel)

    async def _handle_call_tool(self, ctx: Any, params: CallToolRequestParams) -> Any:
        if params.name not in TASK_TOOLS or not declared(params):
            return await super()._handle_call_tool(ctx, params)
        task_id = str(uuid.uuid4())
        stamp = now()
        task = {"taskId": task_id, "status": "working", "createdAt": stamp, "lastUpdatedAt": stamp,
                "ttlMs": TTL_MS, "pollIntervalMs": POLL_MS}
        self.state.tasks[task_id] = task
        self.state.answers[task_id] = asyncio.Queue()
        self.state.calls.append((params.name, dict(params.arguments or {})))
        work = {"render": self._render, "publish": self._publish, "explode": self._explode}[params.name]
        self.state.runners[task_id] = asyncio.create_task(work(task, params.arguments or {}))
        return {"resultType": "task", **task}

    def _set(self, task: dict[str, Any], **changes: Any) -> None:
        task.update(changes, lastUpdatedAt=now())

    async def _render(self, task: dict[str, Any], arguments: dict[str, Any]) -> None:
        frames = int(arguments.get("frames", 3))
        for frame in range(1, frames + 1):
            self._set(task, statusMessage=f"Rendering frame {frame} of {frames}")
            if self.state.gate is not None:
                while not self.state.gate.is_set():
                    await asyncio.sleep(0.02)
            else:
                await asyncio.sleep(FRAME_SECONDS)
        self._set(task, status="completed", statusMessage=None, result=text(f"Rendered {frames} frames."))

    async def _publish(self, task: dict[str, Any], arguments: dict[str, Any]) -> None:
        title = str(arguments.get("title", ""))
        form = {"method": "elicitation/create", "params": {
            "mode": "form", "message": f"Publish {title!r}?",
            "requestedSchema": {"type": "object", "properties": {"note": {"type": "string", "title": "Note"}},
                                "required": ["note"]}}}
        self._set(task, status="input_required", inputRequests={"confirm": form})
        answers = await self.state.answers[task["taskId"]].get()
        answer = answers.get("confirm") or {}
        if answer.get("action") != "accept":
            self._set(task, status="completed", result=text(f"Not published ({answer.get('action')})."))
            return
        self._set(task, status="working", statusMessage="Publishing")
        await asyncio.sleep(FRAME_SECONDS)
        self._set(task, status="completed", result=text(f"Published {title!r}: {answer['content']['note']}"))

    async def _explode(self, task: dict[str, Any], arguments: dict[str, Any]) -> None:
        await asyncio.sleep(FRAME_SECONDS)
        self._set(task, status="failed", error={"code": -32603, "message": "the renderer ran out of memory"})

    def _task(self, params: TaskParams) -> dict[str, Any]:
        task = self.state.tasks.get(params.task_id)
        if task is None:
            from mcp.shared.exceptions import MCPError

            raise MCPError(-32602, f"no task {params.task_id}")
        return task

    async def _get(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        task = self._task(params)
        shown = {key: value for key, value in task.items() if value is not None}
        if task["status"] != "input_required":
            shown.pop("inputRequests", None)
        return {"resultType": "complete", **shown}

    async def _update(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        task = self._task(params)
        if task["status"] == "input_required":
            self._set(task, status="working", inputRequests=None)
            self.state.answers[params.task_id].put_nowait(params.input_responses or {})
        return {"resultType": "complete"}

    async def _cancel(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        task = self._task(params)
        if task["status"] not in ("completed", "failed", "cancelled"):
            self.state.runners[params.task_id].cancel()
            self.state.cancelled.append(params.task_id)
            self._set(task, status="cancelled")
        return {"resultType": "complete"}


def tasks_app(state: TasksState, origin: str | None = None) -> Any:
    server = TasksServer(state)

    @server.tool()
    def render(frames: int = 3) -> str:
        """Renders an animation, a frame at a time (a task)."""
        return f"Rendered {frames} frames."

    @server.tool()
    def publish(title: str) -> str:
        """Publishes a post once the user confirms (a task)."""
        return f"Published {title!r}."

    @server.tool()
    def explode() -> str:
        """Always fails (a task)."""
        return "never"

    @server.tool()
    def greet(name: str) -> str:
        """Greets someone."""
        return f"Hello, {name}!"

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        app = refusing(server.streamable_http_app(), modern_only)
    if origin is None:
        return app
    from starlette.middleware.cors import CORSMiddleware

    return CORSMiddleware(app, allow_origins=[origin], allow_methods=["GET", "POST", "DELETE"],
                          allow_headers=CORS_HEADERS, expose_headers=["Mcp-Session-Id"])
