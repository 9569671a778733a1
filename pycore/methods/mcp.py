"""MCP servers the page connected: ``mcp.connect``, ``mcp.disconnect``, ``mcp.list``,
``mcp.read_resource``, ``mcp.get_prompt``, ``mcp.traffic``, ``mcp.task_result`` (a task a reload left behind);
``mcp.registry_search`` (the MCP registry: :mod:`pycore.mcp.registry`).

Connections live in the worker across calls, keyed by the page's server id; ``chat.run`` takes
their tools by that id. Each tool is described by the name the model sees (``name``), its own name
(``original_name``: what the user's choices are kept under, with the server id), its default
``policy`` (``ask``: a server's hints never let its tools run unasked; :mod:`pycore.agent.approval`) and
the ``fingerprint`` of its definition (an "allow" holds only for that definition). A server's list change
(``notifications/tools/list_changed`` on its session, or on the ``subscriptions/listen`` stream of a 2026-07-28
server: :mod:`pycore.mcp.listen`) updates its tools, prompts and resources for the next run and for ``mcp.list``; a tool
added or changed since the connection is listed with ``new: true`` and asks before its first run even
on a trusted server, until the user allows it. Errors are the MCP client's (:mod:`pycore.mcp.errors`): they
name the problem (cannot reach, 401, not an MCP server, ...). A connected server that a request then found
gone is described with ``status: "unreachable"`` and that sentence as ``problem``, until it answers again.
Each server's description carries its last :data:`LOG_SHOWN` log messages (``notifications/message``;
:attr:`pycore.mcp.ClientSession.log`), which the Tools panel shows per server, and its traffic
(``mcp.traffic``: :mod:`pycore.mcp.traffic`). What a server asks of the user (elicitation, sampling, roots)
is :mod:`pycore.methods.mcp_asks`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pycore.contract.params import (
    ConnectParams,
    GetPromptParams,
    NoParams,
    ReadResourceParams,
    RegistrySearchParams,
    ServerParams,
    TaskResultParams,
)
from pycore.contract.results import (
    Empty,
    LogEntry,
    PromptResult,
    RegistryResults,
    ResourceContents,
    ServerDescription,
    ServerInfo,
    ServerList,
    TaskOutcome,
    ToolInfo,
    TrafficRecord,
)
from pycore.methods._registry import Emit, method
from pycore.methods.mcp_asks import asker, sampler

LOG_SHOWN = 100

if TYPE_CHECKING:
    import mcp_types as t

    from pycore.agent.tools import AgentTool
    from pycore.mcp import ClientSession
    from pycore.methods._state import WorkerState


class Connection:
    def __init__(self, server_id: str, url: str, session: ClientSession) -> None:
        self.id = server_id
        self.url = url
        self.session = session
        self.closed = False
        from pycore.agent.approval import fingerprint

        self.known: set[tuple[str, str]] | None = None  # (name, fingerprint) of the tools listed at connect
        self.known = {(tool.name, fingerprint(tool)) for tool in self.agent_tools()}

    @property
    def resources(self) -> list[t.Resource]:
        """The server's resources as last listed (a list change lists them again: pycore.mcp.listen)."""
        return self.session.resources

    @property
    def prompts(self) -> list[t.Prompt]:
        return self.session.prompts

    @property
    def status(self) -> str:
        """``connected``; ``unreachable`` since a request found no server (until one is answered); ``closed``."""
        return "closed" if self.closed else "unreachable" if self.session.unreachable else "connected"

    def agent_tools(self) -> list[AgentTool]:
        from pycore.agent.approval import fingerprint
        from pycore.agent.mcp_tools import session_tools

        if self.closed:  # an unreachable server's tools are still offered: a call tries it again
            raise ConnectionError(f"MCP server {self.id!r} ({self.url}) is {self.status}; connect it again")
        tools = session_tools(self.id, self.session)
        if self.known is not None:
            for tool in tools:
                tool.changed = (tool.name, fingerprint(tool)) not in self.known
        return tools


@method("mcp.connect", params=ConnectParams, result=ServerDescription)
async def mcp_connect(params: ConnectParams, emit: Emit, worker: WorkerState) -> ServerDescription:
    from pycore.mcp import ClientSession

    server_id, url = params.id, params.url
    if not server_id or not url:
        raise ValueError("mcp.connect needs an id and a url")
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"{url!r} is not an http(s) URL; an MCP server over HTTP has one like https://host/mcp")
    headers, transport = params.headers, params.transport
    if server_id in worker.connections:
        await _close(worker.connections.pop(server_id))
    worker.oauth()  # installed before the session: a sign-in saved before a reload rides along (T-A11)
    session = ClientSession(url, headers=headers, legacy_fallback=transport != "streamable-http",
                            on_elicit=asker(server_id, worker), roots=lambda: list(worker.roots),
                            on_sample=sampler(server_id, worker))
    async with _closing_on_error(session):
        await session.connect()
        await session.list_tools()
        capabilities = session.server.capabilities if session.server else None
        if capabilities and capabilities.resources:
            await session.list_resources()
        if capabilities and capabilities.prompts:
            await session.list_prompts()
    conn = Connection(server_id, url, session)
    worker.connections[server_id] = conn
    return describe(conn, worker)


@method("mcp.traffic", params=ServerParams, result=TrafficRecord)
async def mcp_traffic(params: ServerParams, emit: Emit, worker: WorkerState) -> TrafficRecord:
    """The server's traffic so far (the inspector's view and export)."""
    from pycore.mcp.traffic import export

    conn = worker.connections.get(params.id)
    if conn is None:
        known = ", ".join(sorted(worker.connections)) or "none"
        raise LookupError(f"no MCP server {params.id!r} has been connected (known: {known})")
    info = conn.session.server
    server = ({"name": info.server_info.name, "version": info.server_info.version,
               "protocol": conn.session.protocol_version} if info else {})
    return TrafficRecord(**export(conn.url, conn.session.traffic, server))


class _closing_on_error:  # noqa: N801 - used as a context manager
    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, kind: object, error: object, tb: object) -> None:
        if error is not None:
            await self.session.aclose()


def describe(conn: Connection, worker: WorkerState) -> ServerDescription:
    from pycore.agent.approval import default_policy, fingerprint
    from pycore.agent.mcp_tools import mcp_tool
    from pycore.agent.tools import ToolRegistry
    from pycore.mcp.apps import for_model, ui_resource

    server = conn.session.server
    mine = [tool for c in worker.connections.values() if not c.closed for tool in c.agent_tools()]
    if conn.id not in worker.connections:
        mine += conn.agent_tools()
    registry = ToolRegistry(mine)
    views = {tool.name: ui_resource(tool) for tool in conn.session.tools}
    outputs = {tool.name: tool.output_schema for tool in conn.session.tools}
    tools = []
    for name, tool in registry.items():
        if tool.source != f"mcp:{conn.id}":
            continue
        tools.append(ToolInfo(name=name, original_name=tool.name, description=tool.description,
                              input_schema=tool.input_schema, policy=default_policy(tool),
                              fingerprint=fingerprint(tool), new=tool.changed, annotations=tool.annotations or None,
                              ui=views.get(tool.name), output_schema=outputs.get(tool.name)))
    # Tools a server keeps for its views are listed too, so the user sees and sets how a view's calls of them
    # are approved (the model is never offered them: pycore.agent.mcp_tools).
    for definition in conn.session.tools if not conn.closed else []:
        if for_model(definition):
            continue
        tool = mcp_tool(conn.id, conn.session, definition)
        tools.append(ToolInfo(name=tool.name, original_name=tool.name, description=tool.description,
                              input_schema=tool.input_schema, policy=default_policy(tool),
                              fingerprint=fingerprint(tool), new=False, annotations=tool.annotations or None,
                              ui=views.get(tool.name), views_only=True))
    return ServerDescription(
        id=conn.id,
        url=conn.url,
        status=conn.status,
        problem=str(conn.session.unreachable) if conn.session.unreachable and not conn.closed else None,
        transport=conn.session.transport_kind,
        server=ServerInfo(name=server.server_info.name, version=server.server_info.version) if server else None,
        protocol_version=conn.session.protocol_version,
        tools=tools,
        resources=[_dump(r, {"uri", "name", "title", "description", "mime_type"}) for r in conn.resources],
        prompts=[_dump(p, {"name", "title", "description", "arguments"}) for p in conn.prompts],
        log=[LogEntry(**entry) for entry in list(conn.session.log)[-LOG_SHOWN:]],
    )


def _dump(model: Any, include: set[str]) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True, include=include)
    return dumped


async def _close(conn: Connection) -> None:
    conn.closed = True
    await conn.session.aclose()


@method("mcp.disconnect", params=ServerParams, result=Empty)
async def mcp_disconnect(params: ServerParams, emit: Emit, worker: WorkerState) -> Empty:
    conn = worker.connections.pop(params.id, None)
    if conn is not None:
        await _close(conn)
    return Empty()


@method("mcp.list", params=NoParams, result=ServerList)
async def mcp_list(params: NoParams, emit: Emit, worker: WorkerState) -> ServerList:
    return ServerList(servers=[describe(conn, worker) for conn in worker.connections.values()])


@method("mcp.read_resource", params=ReadResourceParams, result=ResourceContents)
async def mcp_read_resource(params: ReadResourceParams, emit: Emit, worker: WorkerState) -> ResourceContents:
    conn = worker.connection(params.id)
    uri = params.uri
    if not uri:
        raise ValueError("mcp.read_resource needs a uri")
    result = await conn.session.read_resource(str(uri))
    out = ResourceContents(contents=[c.model_dump(mode="json", by_alias=True, exclude_none=True)
                                     for c in result.contents])
    if params.as_parts:
        # {as_parts: true, name?}: also the contents as message parts to attach to the next user message
        # (text labelled with its URI, real images only: pycore.mcp.attach), which the page adds as they are.
        from pycore.mcp.attach import resource_parts

        parts = resource_parts(result, name=params.name or None)
        out.parts = list(parts)
    return out


@method("mcp.get_prompt", params=GetPromptParams, result=PromptResult)
async def mcp_get_prompt(params: GetPromptParams, emit: Emit, worker: WorkerState) -> PromptResult:
    from pycore.agent.mcp_prompts import prompt_messages

    conn = worker.connection(params.id)
    if not params.name:
        raise ValueError("mcp.get_prompt needs the prompt's name")
    arguments = {str(k): str(v) for k, v in params.arguments.items()}
    result = await conn.session.get_prompt(params.name, arguments)
    return PromptResult(messages=prompt_messages(result), description=result.description or None)


@method("mcp.task_result", params=TaskResultParams, result=TaskOutcome)
async def mcp_task_result(params: TaskResultParams, emit: Emit, worker: WorkerState) -> TaskOutcome:
    """A call its server runs as a task, picked up again by its handle (the run that made it ended with the page):
    followed to its end, its status streamed as the run's ``tool_progress`` (step 0), its result the part the run
    would have given the model. The server's word that the task failed, was cancelled or is gone is that result, as
    an error; a server that cannot be reached (or is not connected) fails the call, and the handle stays good."""
    import time

    from pycore.agent.loop import describe_error, result_part
    from pycore.agent.mcp_tools import tool_result
    from pycore.agent.tools import ToolResult
    from pycore.contract import ToolProgressEvent, to_wire
    from pycore.mcp import MCPProtocolError, MCPRPCError

    handle = params.handle
    conn = worker.connection(handle.server_id)

    def progress(done: float, total: float | None = None, message: str | None = None, task: Any = None) -> None:
        status = task if task in ("working", "input_required") else None
        emit(to_wire(ToolProgressEvent(step=0, call_id=handle.call_id, progress=done, total=total, message=message,
                                       task=status)))

    started = time.monotonic()
    try:
        raw = await conn.session.resume_task(handle.task_id, on_progress=progress)
        tool = next((tool for tool in conn.session.tools if tool.name == handle.tool), None)
        result = tool_result(raw, tool.output_schema if tool else None)
    except (MCPRPCError, MCPProtocolError) as e:
        result = ToolResult.text(f"{handle.name} failed: {describe_error(e)}", is_error=True)
    duration = round((time.monotonic() - started) * 1000, 1)
    return TaskOutcome(part=result_part(handle.call_id, handle.name, result, duration, source=f"mcp:{conn.id}"))


@method("mcp.registry_search", params=RegistrySearchParams, result=RegistryResults)
async def mcp_registry_search(params: RegistrySearchParams, emit: Emit, worker: WorkerState) -> RegistryResults:
    """One request to the registry, made only because the user searched; nothing is connected."""
    from pycore.mcp.registry import search

    return RegistryResults.model_validate({"servers": await search(params.url, params.query)})
