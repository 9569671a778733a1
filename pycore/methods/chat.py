"""``chat.run`` (the agent loop), ``chat.approve`` and ``chat.page_tool_result``.

Tools for a run come from three places, named in ``params.tools``: connected MCP servers (by the
page's server id), Python tool sets made by ``tools.python`` (by their id), and the page's own
JavaScript tools (definitions; the page runs the handler when it gets a ``page_tool`` event and
answers with ``chat.page_tool_result``). ``disabled`` tools and ``deny`` tools are not offered.

``params.policy`` is the user's choices, each for one tool of one source
(``[{source, tool, policy, fingerprint?}]``, :mod:`pycore.agent.approval`); ``tools.disabled`` names tools
the same way (``[{source, tool}]``); ``tools.trusted`` lists the ids of the MCP servers the user marked
trusted (their tools run without asking unless a hint asks more: :mod:`pycore.agent.approval`).
``chat.approve`` answers an ``approval`` event with ``allow``, ``deny`` or ``always``.

Stop is the page cancelling the call: the run still returns its result, with ``stop_reason``
``"stopped"``, after the partial message was emitted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pycore.contract.params import ApproveParams, PageToolResultParams
from pycore.methods._provider import make_client
from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.agent.tools import AgentTool
    from pycore.methods._state import WorkerState

@method("chat.run")
async def chat_run(params: dict[str, Any], emit: Emit, worker: WorkerState) -> dict[str, Any]:
    from pycore.agent.approval import ApprovalPolicy
    from pycore.agent.loop import AgentLoop, Limits
    from pycore.agent.tools import ToolRegistry

    request = _request(params)
    spec = params.get("tools") or {}
    if not isinstance(spec, dict):
        raise ValueError("tools must be an object: {mcp?: [server id], page?: [definition], python?: [set id]}")
    registry = ToolRegistry([tool for server_id in spec.get("mcp") or []
                             for tool in worker.connection(server_id).agent_tools()]
                            + [tool for set_id in spec.get("python") or [] for tool in worker.tool_set(set_id)]
                            + _page_tools(spec.get("page") or [], emit, worker))
    choices = _choices(params.get("policy") or [], spec.get("disabled") or [])
    trusted = spec.get("trusted") or []
    if not isinstance(trusted, list) or not all(isinstance(server_id, str) for server_id in trusted):
        raise ValueError("tools.trusted is a list of the ids of the MCP servers the user marked trusted")
    limits = params.get("limits") or {}
    client = make_client(params.get("provider"), worker)
    loop = AgentLoop(
        client, request, registry,
        policy=ApprovalPolicy(choices, trusted=[f"mcp:{server_id}" for server_id in trusted]),
        limits=Limits(
            max_steps=int(limits.get("max_steps") or 10),
            token_budget=int(limits["token_budget"]) if limits.get("token_budget") else None,
            tool_timeout=float(limits.get("tool_timeout_s") or 60),
        ),
        emit=emit,
        approvals=worker.approvals,
    )
    try:
        result = await loop.run()
    finally:
        await client.transport.aclose()
    return result.to_json()


def _choices(policy: Any, disabled: Any) -> list[dict[str, Any]]:
    if not isinstance(policy, list) or not isinstance(disabled, list):
        raise ValueError("policy is a list of {source, tool, policy, fingerprint?} and tools.disabled a list of "
                         "{source, tool}: a choice by a bare tool name would cover that name from every source")
    off = [{"source": d.get("source"), "tool": d.get("tool"), "policy": "deny"} if isinstance(d, dict) else d
           for d in disabled]
    return [*policy, *off]


def _request(params: dict[str, Any]) -> Any:
    from pydantic import TypeAdapter, ValidationError

    from pycore.messages import ChatRequest, Message

    if not params.get("model"):
        raise ValueError("chat.run needs a model")
    try:
        messages = TypeAdapter(list[Message]).validate_python(params.get("messages") or [])
    except ValidationError as e:
        raise ValueError(f"chat.run: messages are not valid: {e}") from None
    if not messages:
        raise ValueError("chat.run needs at least one message")
    return ChatRequest(
        model=params["model"], messages=messages, system=params.get("system") or None,
        temperature=params.get("temperature"), max_tokens=params.get("max_tokens"),
        vendor_options=params.get("vendor_options") or {},
    )


def _page_tools(definitions: list[dict[str, Any]], emit: Emit, worker: WorkerState) -> list[AgentTool]:
    from pycore.agent.tools import AgentTool, ToolContext, ToolResult

    def handler_for(name: str) -> Any:
        async def handler(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
            answer = worker.page_results.expect(context.call_id)
            emit({"type": "page_tool", "call_id": context.call_id, "name": name, "arguments": arguments})
            result: ToolResult = await answer
            return result

        return handler

    tools = []
    for definition in definitions:
        if not isinstance(definition, dict) or not definition.get("name"):
            raise ValueError(f"a page tool needs a name, description and inputSchema; got {definition!r}")
        tools.append(AgentTool(
            name=definition["name"], description=definition.get("description") or "",
            input_schema=definition.get("inputSchema") or {"type": "object"},
            handler=handler_for(definition["name"]), source="page", annotations=definition.get("annotations"),
        ))
    return tools


@method("chat.approve", params=ApproveParams)
async def chat_approve(params: ApproveParams, emit: Emit, worker: WorkerState) -> dict[str, Any]:
    worker.approvals.resolve(params.call_id, params.decision)
    return {}


@method("chat.page_tool_result", params=PageToolResultParams)
async def chat_page_tool_result(params: PageToolResultParams, emit: Emit, worker: WorkerState) -> dict[str, Any]:
    from pycore.agent.tools import ToolResult

    result = ToolResult(content=params.content, is_error=params.is_error)
    worker.page_results.resolve(params.call_id, result)
    return {}
