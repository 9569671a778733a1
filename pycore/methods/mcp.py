"""MCP servers the page connected: ``mcp.connect``, ``mcp.disconnect``, ``mcp.list``,
``mcp.read_resource``, ``mcp.get_prompt``, ``mcp.elicitation_result``, ``mcp.sampling_answer``, ``mcp.set_roots``,
``mcp.traffic``.

Connections live in the worker across calls, keyed by the page's server id; ``chat.run`` takes
their tools by that id. Each tool is described by the name the model sees (``name``), its own name
(``original_name``: what the user's choices are kept under, with the server id), its default
``policy`` (``ask``: a server's hints never let its tools run unasked; :mod:`pycore.agent.approval`) and
the ``fingerprint`` of its definition (an "allow" holds only for that definition). A server's
``notifications/tools/list_changed`` updates its tools for the next run and for ``mcp.list``; a tool
added or changed since the connection is listed with ``new: true`` and asks before its first run even
on a trusted server, until the user allows it. Errors are the MCP client's (:mod:`pycore.mcp.errors`):
they name the problem (cannot reach, 401, not an MCP server, ...). Each server's description carries its
last :data:`LOG_SHOWN` log messages (``notifications/message``; :attr:`pycore.mcp.ClientSession.log`), which
the Tools panel shows per server. A server's questions (elicitation: :mod:`pycore.mcp.elicitation`) are put
to the user as ``elicitation`` events of the running ``chat.run``; ``mcp.elicitation_result`` answers them.
A server's sampling requests are shown the same way (``sampling`` events), run on the run's model once the user
approves them and sent back once the user has seen the answer (``mcp.sampling_answer``). Roots (``roots/list``)
are the user's, none unless they add some (``mcp.set_roots``).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pycore.contract import ElicitationEvent, SamplingEvent
from pycore.contract.params import (
    ConnectParams,
    ElicitationAnswerParams,
    GetPromptParams,
    NoParams,
    ReadResourceParams,
    RootsParams,
    SamplingAnswerParams,
    ServerParams,
)
from pycore.contract.results import (
    Empty,
    LogEntry,
    PromptResult,
    ResourceContents,
    ServerDescription,
    ServerInfo,
    ServerList,
    ToolInfo,
    TrafficRecord,
)
from pycore.methods._registry import Emit, method

LOG_SHOWN = 100

if TYPE_CHECKING:
    import mcp_types as t

    from pycore.agent.tools import AgentTool
    from pycore.mcp import ClientSession
    from pycore.methods._state import WorkerState


class Connection:
    def __init__(self, server_id: str, url: str, session: ClientSession, *, resources: list[t.Resource],
                 prompts: list[t.Prompt]) -> None:
        self.id = server_id
        self.url = url
        self.session = session
        self.status = "connected"
        self.resources = resources
        self.prompts = prompts
        from pycore.agent.approval import fingerprint

        self.known: set[tuple[str, str]] | None = None  # (name, fingerprint) of the tools listed at connect
        self.known = {(tool.name, fingerprint(tool)) for tool in self.agent_tools()}

    def agent_tools(self) -> list[AgentTool]:
        from pycore.agent.approval import fingerprint
        from pycore.agent.mcp_tools import session_tools

        if self.status != "connected":
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
    session = ClientSession(url, headers=headers, legacy_fallback=transport != "streamable-http",
                            on_elicit=_asker(server_id, worker), roots=lambda: list(worker.roots),
                            on_sample=_sampler(server_id, worker))
    async with _closing_on_error(session):
        await session.connect()
        await session.list_tools()
        capabilities = session.server.capabilities if session.server else None
        resources = await session.list_resources() if capabilities and capabilities.resources else []
        prompts = await session.list_prompts() if capabilities and capabilities.prompts else []
    conn = Connection(server_id, url, session, resources=resources, prompts=prompts)
    worker.connections[server_id] = conn
    return describe(conn, worker)


def _asker(server_id: str, worker: WorkerState) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
    """How the server's questions reach the user: as an ``elicitation`` event of the newest running chat.run
    (a question while no run is going, when nobody could answer, is cancelled)."""

    async def ask(params: dict[str, Any]) -> dict[str, Any]:
        if not worker.runs:
            return {"action": "cancel"}
        question = uuid.uuid4().hex[:16]
        answer = worker.elicitations.expect(question)
        run = worker.runs[-1]
        worker.questions[question] = (params, run)
        url = params.get("url") if params.get("mode") == "url" else None
        try:
            run.emit(ElicitationEvent(
                id=question, server_id=server_id, mode="url" if url else "form", message=str(params["message"]),
                requested_schema=None if url else params.get("requestedSchema"), url=url,
                url_host=urlsplit(url).hostname if url else None).model_dump(mode="json", exclude_none=True))
            result: dict[str, Any] = await answer
            return result
        finally:
            worker.questions.pop(question, None)
            if not answer.done():
                answer.cancel()

    return ask


@method("mcp.elicitation_result", params=ElicitationAnswerParams, result=Empty)
async def mcp_elicitation_result(params: ElicitationAnswerParams, emit: Emit, worker: WorkerState) -> Empty:
    """The user's answer: a form's content is checked (defaults filled in) before it goes to the server, so a
    problem comes back to the page, named, and the question stays open."""
    from pycore.mcp.elicitation import accept

    if params.id not in worker.questions:
        worker.elicitations.resolve(params.id, None)  # raises: nobody is waiting for this id
        return Empty()
    asked, _run = worker.questions[params.id]
    answer: dict[str, Any] = {"action": params.action}
    if params.action == "accept" and asked.get("mode", "form") == "form":
        answer["content"] = accept(asked["requestedSchema"], params.content)
    worker.elicitations.resolve(params.id, answer)
    return Empty()


def _sampler(server_id: str, worker: WorkerState) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
    """A server's sampling request (:mod:`pycore.mcp.sampling`): shown to the user in the newest running chat.run,
    run on its model within the user's budget once approved (as edited), and its answer sent back only when the
    user says so. No run going: nobody to ask, so it is denied."""

    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        from pycore.mcp.sampling import SamplingDenied, text_of, to_messages, to_result
        from pycore.messages import ChatRequest

        if not worker.runs:
            raise SamplingDenied("sampling needs a conversation in progress to ask the user")
        run = worker.runs[-1]
        sample_id = uuid.uuid4().hex[:16]
        asked = int(params.get("maxTokens") or run.sampling_max_tokens)
        max_tokens = max(1, min(asked, run.sampling_max_tokens))
        hints = [str(h.get("name")) for h in (params.get("modelPreferences") or {}).get("hints") or []
                 if isinstance(h, dict) and h.get("name")]
        worker.sampling_runs[sample_id] = run
        try:
            decision = worker.samplings.expect(sample_id)
            run.emit(SamplingEvent(id=sample_id, server_id=server_id, stage="request", model=run.model,
                                   max_tokens=max_tokens, messages=text_of(params.get("messages") or []),
                                   system_prompt=params.get("systemPrompt"), model_hints=hints)
                     .model_dump(mode="json", exclude_none=True))
            answer = await decision
            if answer["action"] != "approve":
                raise SamplingDenied("the user denied the sampling request")
            messages = (to_messages([{"role": m["role"], "content": {"type": "text", "text": m["text"]}}
                                     for m in answer["messages"]])
                        if answer.get("messages") else to_messages(params.get("messages") or []))
            system = answer["system_prompt"] if answer.get("system_prompt") is not None else params.get("systemPrompt")
            stream = run.client.stream(ChatRequest(model=run.model, messages=messages, system=system,
                                                   max_tokens=max_tokens, temperature=params.get("temperature")))
            async for _event in stream:  # streamed, as every request of the app is; the answer is shown whole
                pass
            completion = stream.completion
            if completion is None or completion.error is not None:
                raise RuntimeError(completion.error.message if completion and completion.error else "no answer")
            decision = worker.samplings.expect(sample_id)
            run.emit(SamplingEvent(id=sample_id, server_id=server_id, stage="result", model=run.model,
                                   max_tokens=max_tokens, text=completion.text(),
                                   stop_reason=completion.finish_reason).model_dump(mode="json", exclude_none=True))
            if (await decision)["action"] != "send":
                raise SamplingDenied("the user did not send the model's answer")
            return to_result(completion, run.model)
        finally:
            worker.sampling_runs.pop(sample_id, None)

    return sample


@method("mcp.sampling_answer", params=SamplingAnswerParams, result=Empty)
async def mcp_sampling_answer(params: SamplingAnswerParams, emit: Emit, worker: WorkerState) -> Empty:
    """The user's answer to a ``sampling`` event's stage: approve (as edited) or deny a request, send or deny its
    result."""
    answer: dict[str, Any] = {"action": params.action}
    if params.messages is not None:
        if not params.messages or any(m.get("role") not in ("user", "assistant") or not isinstance(m.get("text"), str)
                                      for m in params.messages):
            raise ValueError("messages must be [{role: 'user' | 'assistant', text}], at least one")
        answer["messages"] = params.messages
    if params.system_prompt is not None:
        answer["system_prompt"] = params.system_prompt
    worker.samplings.resolve(params.id, answer)
    return Empty()


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


@method("mcp.set_roots", params=RootsParams, result=Empty)
async def mcp_set_roots(params: RootsParams, emit: Emit, worker: WorkerState) -> Empty:
    """The user's roots, answered to every server's ``roots/list``; connected servers are told they changed."""
    from pycore.mcp.errors import MCPError

    worker.roots = [root.model_dump(exclude_none=True) for root in params.roots]
    for conn in list(worker.connections.values()):
        if conn.status == "connected":
            try:
                await conn.session.roots_changed()
            except MCPError:  # a server gone meanwhile asks again when it is reconnected
                continue
    return Empty()


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
    from pycore.agent.tools import ToolRegistry

    server = conn.session.server
    mine = [tool for c in worker.connections.values() if c.status == "connected" for tool in c.agent_tools()]
    if conn.id not in worker.connections:
        mine += conn.agent_tools()
    registry = ToolRegistry(mine)
    tools = []
    for name, tool in registry.items():
        if tool.source != f"mcp:{conn.id}":
            continue
        tools.append(ToolInfo(name=name, original_name=tool.name, description=tool.description,
                              input_schema=tool.input_schema, policy=default_policy(tool),
                              fingerprint=fingerprint(tool), new=tool.changed, annotations=tool.annotations or None))
    return ServerDescription(
        id=conn.id,
        url=conn.url,
        status=conn.status,
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
    conn.status = "closed"
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
