"""Helpers for the agent tests: recorded vendor streams served in order, tools that record their calls.

Stdlib, pytest and pycore only: imported by tests that also run inside Pyodide.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from vendor_fixtures import fixture, no_sleep

from pycore.adapters import get_adapter
from pycore.agent.approval import ApprovalPolicy, fingerprint
from pycore.agent.loop import AgentLoop, Limits
from pycore.agent.pending import Pending
from pycore.agent.tools import AgentTool, ToolContext, ToolRegistry, ToolResult
from pycore.client import ChatClient
from pycore.http.replay import Recording, ReplayTransport
from pycore.messages import ChatRequest, Message

KEY = "sk-test-SECRET-key-0123456789"


def recording(file: str, **kwargs: Any) -> Recording:
    f = fixture(file)
    return Recording(f.body(), status=f.status, content_type=f.content_type, chunk_size=kwargs.pop("chunk_size", 41),
                     **kwargs)


def vendor_of(files: list[str]) -> str:
    return fixture(files[0]).vendor


def replay_client(vendor: str, recordings: list[Recording]) -> tuple[ChatClient, ReplayTransport]:
    transport = ReplayTransport(recordings)
    return ChatClient(get_adapter(vendor, api_key=KEY), transport, sleep=no_sleep), transport


class Calls:
    """Tools that record what they were called with, in order; behaviour per name."""

    def __init__(self) -> None:
        self.log: list[tuple[str, dict[str, Any]]] = []
        self.cancelled: list[str] = []

    def tool(self, name: str, behaviour: Callable[[dict[str, Any]], Any] | None = None, *,
             source: str = "python:test", annotations: dict[str, Any] | None = None) -> AgentTool:
        async def handler(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
            self.log.append((name, arguments))
            try:
                value = behaviour(arguments) if behaviour else f"{name} result for {sorted(arguments.items())}"
                if asyncio.iscoroutine(value):
                    value = await value
            except asyncio.CancelledError:
                self.cancelled.append(name)
                raise
            return value if isinstance(value, ToolResult) else ToolResult.text(str(value))

        return AgentTool(name=name, description=f"the {name} tool", input_schema={"type": "object"},
                         handler=handler, source=source, annotations=annotations)


def choices(tools: list[AgentTool], policy: dict[str, str] | None) -> list[dict[str, Any]]:
    """``{tool name: policy}`` as the user's choices for the tools of that name (each of its own source, an
    allow for its definition as it is)."""
    return [{"source": tool.source, "tool": tool.name, "policy": choice, "fingerprint": fingerprint(tool)}
            for name, choice in (policy or {}).items() for tool in tools if tool.name == name]


class Run:
    """One loop over replayed recordings, its events kept as emitted."""

    def __init__(self, files: list[str | Recording], tools: list[AgentTool], *, vendor: str | None = None,
                 policy: dict[str, str] | None = None, limits: Limits | None = None,
                 on_event: Callable[[dict[str, Any], Run], None] | None = None) -> None:
        recordings = [recording(f) if isinstance(f, str) else f for f in files]
        names = [f for f in files if isinstance(f, str)]
        self.vendor = vendor or vendor_of(names)
        self.client, self.transport = replay_client(self.vendor, recordings)
        self.events: list[dict[str, Any]] = []
        self.approvals = Pending("approval")
        self._on_event = on_event
        request = ChatRequest(model="m", messages=[Message.user("go")])
        self.loop = AgentLoop(self.client, request, ToolRegistry(tools), policy=ApprovalPolicy(choices(tools, policy)),
                              limits=limits or Limits(), emit=self._emit, approvals=self.approvals)

    def _emit(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        if self._on_event:
            self._on_event(event, self)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    def messages(self) -> list[dict[str, Any]]:
        return [e["message"] for e in self.of("message")]
