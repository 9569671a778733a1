"""Tool calls that do not come from the model's own tool calls: ``mcp.app_call_tool`` and ``mcp.code_call_tool``.

A view (:mod:`pycore.mcp.apps`; the page draws it, web/mcp_app/view.js) calls tools of its own server only, and
only those whose visibility includes ``app``. The code of a ``python`` call (code mode, issue #33: the page passes
on what the notebook's ``orizuru.tools`` asks, web/sandbox/code_mode.js) calls the tools offered to the model
(visibility includes ``model``). Both go through the same approval policy as the model's calls
(:mod:`pycore.agent.approval`: the user's choices, the server's trust, its hints): ``allow`` runs the call,
``deny`` refuses it, ``ask`` emits an ``approval`` event (step 0) and waits for ``chat.approve``. The result goes
back as the server sent it (``CallToolResult``). The view's own resource reads are ``mcp.read_resource``.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, ClassVar, Literal

from pycore.contract.params import AppToolCallParams, CodeToolCallParams
from pycore.contract.results import AppToolResult
from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.methods._state import WorkerState


class ViewToolRefusedError(PermissionError):
    """A view (or code) asked for a tool it may not call, or the user said no."""

    error_code: ClassVar[str] = "tool_refused"


@method("mcp.app_call_tool", params=AppToolCallParams, result=AppToolResult)
async def mcp_app_call_tool(params: AppToolCallParams, emit: Emit, worker: WorkerState) -> AppToolResult:
    return await approved_call(params, emit, worker, caller="view")


@method("mcp.code_call_tool", params=CodeToolCallParams, result=AppToolResult)
async def mcp_code_call_tool(params: CodeToolCallParams, emit: Emit, worker: WorkerState) -> AppToolResult:
    return await approved_call(params, emit, worker, caller="code")


async def approved_call(params: AppToolCallParams, emit: Emit, worker: WorkerState, *,
                        caller: Literal["view", "code"]) -> AppToolResult:
    """The call, once the user's choices (or the user, asked) allow it; who calls names what it may call."""
    from pycore.agent.approval import ApprovalPolicy, ask_user, crossing
    from pycore.agent.mcp_tools import mcp_tool
    from pycore.mcp.apps import for_app, for_model

    conn = worker.connection(params.id)
    definition = next((tool for tool in conn.session.tools if tool.name == params.name), None)
    asker, who = ("the view", "its view") if caller == "view" else ("the code", "the code")
    if definition is None:
        raise ValueError(f"{asker} asked for tool {params.name!r}, which server {params.id!r} does not have")
    if caller == "view" and not for_app(definition):
        raise ViewToolRefusedError(f"tool {params.name!r} of server {params.id!r} is offered to the model only "
                                   "(its visibility leaves out 'app'), so its views may not call it")
    if caller == "code" and not for_model(definition):
        raise ViewToolRefusedError(f"tool {params.name!r} of server {params.id!r} is kept for its views "
                                   "(its visibility leaves out 'model'), so code may not call it")
    tool = mcp_tool(conn.id, conn.session, definition)
    policy = ApprovalPolicy(params.policy, trusted=[tool.source] if params.trusted else []).for_tool(tool)
    reason = crossing(tool, params.read_from) if isinstance(params, CodeToolCallParams) else None
    if policy == "ask" or (policy == "allow" and reason):
        call_id = params.call_id or f"{caller}-{uuid.uuid4().hex[:12]}"
        decision = await ask_user(worker.approvals, emit, step=0, call_id=call_id, name=tool.name, tool=tool,
                                  arguments=params.arguments, reason=reason)
        policy = "allow" if decision in ("allow", "always") else "deny"
    if policy == "deny":
        raise ViewToolRefusedError(f"you did not allow {params.name!r} of {params.id!r} to run for {who}")
    result = await conn.session.call_tool_raw(definition.name, params.arguments)
    return AppToolResult(result=result.model_dump(mode="json", by_alias=True, exclude_none=True))
