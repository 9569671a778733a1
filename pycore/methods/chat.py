"""``chat.run`` (the agent loop), ``chat.approve`` and ``chat.page_tool_result``.

Tools for a run come from two places, named in ``params.tools``: connected MCP servers (by the
page's server id), and the tools the page runs (definitions, each with its source: the page's own
JavaScript tools, ``page``, and the user's Python tool sets, ``python:<set id>``, which the page runs in
the code interpreter's sandbox so that they never share this worker, its keys or its tokens; the page
runs the tool when it gets a ``page_tool`` event and answers with ``chat.page_tool_result``).
``disabled`` tools and ``deny`` tools are not offered.

``params.policy`` is the user's choices, each for one tool of one source
(``[{source, tool, policy, fingerprint?}]``, :mod:`pycore.agent.approval`); ``tools.disabled`` names tools
the same way (``[{source, tool}]``); ``tools.trusted`` lists the ids of the MCP servers the user marked
trusted (their tools run without asking unless a hint asks more: :mod:`pycore.agent.approval`).
``chat.approve`` answers an ``approval`` event with ``allow``, ``deny`` or ``always``.

Runs go on at once (Compare sends one message to several models): each is its own call, cancelled on its own,
and names itself with ``params.run_id`` (any string the page picks, unique among its running runs); the page
answers that run's approvals and page tools with the same ``run_id`` (:meth:`pycore.agent.pending.Pending.for_run`).

Stop is the page cancelling the call: the run still returns its result, with ``stop_reason``
``"stopped"``, after the partial message was emitted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pycore.contract.params import ApproveParams, ChatRunParams, PageTool, PageToolResultParams
from pycore.contract.results import Empty, RunResult, Usage
from pycore.methods._provider import make_client
from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.agent.tools import AgentTool
    from pycore.messages import ChatRequest
    from pycore.methods._state import WorkerState

@method("chat.run", params=ChatRunParams, result=RunResult)
async def chat_run(params: ChatRunParams, emit: Emit, worker: WorkerState) -> RunResult:
    from pycore.agent.approval import ApprovalPolicy
    from pycore.agent.loop import AgentLoop, Limits
    from pycore.agent.tools import ToolRegistry

    request = _request(params)
    spec = params.tools
    registry = ToolRegistry([tool for server_id in spec.mcp for tool in worker.connection(server_id).agent_tools()]
                            + _page_tools(spec.page, emit, worker, params.run_id))
    denied = [{"source": ref.source, "tool": ref.tool, "policy": "deny"} for ref in spec.disabled]
    client = make_client(params.provider, worker)
    loop = AgentLoop(
        client, request, registry,
        policy=ApprovalPolicy([*params.policy, *denied], trusted=[f"mcp:{server_id}" for server_id in spec.trusted]),
        limits=Limits(max_steps=params.limits.max_steps, token_budget=params.limits.token_budget,
                      tool_timeout=params.limits.tool_timeout_s),
        emit=emit,
        approvals=worker.approvals.for_run(params.run_id),
    )
    from pycore.methods._state import ActiveRun

    # What an MCP server asks during the run (elicitation, sampling) comes to the page through its events.
    run = ActiveRun(emit=emit, client=client, model=params.model, sampling_max_tokens=params.limits.sampling_max_tokens,
                    sampling_max_input_chars=params.limits.sampling_max_input_chars)
    worker.runs.append(run)
    try:
        result = await loop.run()
    finally:
        worker.end_run(run)
        await client.transport.aclose()
    return RunResult(stop_reason=result.stop_reason, steps=result.steps, error=result.error,
                     usage=Usage(input_tokens=result.input_tokens, output_tokens=result.output_tokens))


def _request(params: ChatRunParams) -> ChatRequest:
    from pycore.messages import ChatRequest

    return ChatRequest(model=params.model, messages=params.messages, system=params.system,
                       temperature=params.temperature, max_tokens=params.max_tokens,
                       reasoning=params.reasoning, vendor_options=params.vendor_options)


def _page_tools(definitions: list[PageTool], emit: Emit, worker: WorkerState, run_id: str | None
                ) -> list[AgentTool]:
    from pycore.agent.tools import AgentTool, ToolContext, ToolResult
    from pycore.contract import PageToolEvent, to_wire

    def handler_for(source: str, name: str) -> Any:
        async def handler(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
            answer = worker.page_results.for_run(run_id).expect(context.call_id)
            emit(to_wire(PageToolEvent(call_id=context.call_id, source=source, name=name, arguments=arguments)))
            result: ToolResult = await answer
            return result

        return handler

    return [AgentTool(name=d.name, description=d.description, input_schema=d.input_schema,
                      handler=handler_for(d.source, d.name), source=d.source, annotations=d.annotations)
            for d in definitions]


@method("chat.approve", params=ApproveParams, result=Empty)
async def chat_approve(params: ApproveParams, emit: Emit, worker: WorkerState) -> Empty:
    worker.approvals.for_run(params.run_id).resolve(params.call_id, params.decision)
    return Empty()


@method("chat.page_tool_result", params=PageToolResultParams, result=Empty)
async def chat_page_tool_result(params: PageToolResultParams, emit: Emit, worker: WorkerState) -> Empty:
    from pycore.agent.tools import ToolResult

    result = ToolResult(content=params.content, is_error=params.is_error, structured=params.structured_content)
    worker.page_results.for_run(params.run_id).resolve(params.call_id, result)
    return Empty()
