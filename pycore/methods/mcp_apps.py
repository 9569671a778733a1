"""What an MCP App view may do through the core: ``mcp.app_call_tool``.

A view (:mod:`pycore.mcp.apps`; the page draws it, web/mcp_app/view.js) calls tools of its own server only, and
only those whose visibility includes ``app``. Its calls go through the same approval policy as the model's
(:mod:`pycore.agent.approval`: the user's choices, the server's trust, its hints): ``allow`` runs the call,
``deny`` refuses it, ``ask`` emits an ``approval`` event (step 0) and waits for ``chat.approve``. The result goes
back to the view as the server sent it (``CallToolResult``). The view's own resource reads are ``mcp.read_resource``.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, ClassVar

from pycore.contract.params import AppToolCallParams
from pycore.contract.results import AppToolResult
from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.methods._state import WorkerState


class ViewToolRefusedError(PermissionError):
    """A view asked for a tool it may not call, or the user said no."""

    error_code: ClassVar[str] = "tool_refused"


@method("mcp.app_call_tool", params=AppToolCallParams, result=AppToolResult)
async def mcp_app_call_tool(params: AppToolCallParams, emit: Emit, worker: WorkerState) -> AppToolResult:
    from pycore.agent.approval import ApprovalPolicy, ask_user
    from pycore.agent.mcp_tools import mcp_tool
    from pycore.mcp.apps import for_app

    conn = worker.connection(params.id)
    definition = next((tool for tool in conn.session.tools if tool.name == params.name), None)
    if definition is None:
        raise ValueError(f"the view asked for tool {params.name!r}, which server {params.id!r} does not have")
    if not for_app(definition):
        raise ViewToolRefusedError(f"tool {params.name!r} of server {params.id!r} is offered to the model only "
                                   "(its visibility leaves out 'app'), so its views may not call it")
    tool = mcp_tool(conn.id, conn.session, definition)
    policy = ApprovalPolicy(params.policy, trusted=[tool.source] if params.trusted else []).for_tool(tool)
    if policy == "ask":
        call_id = params.call_id or f"view-{uuid.uuid4().hex[:12]}"
        decision = await ask_user(worker.approvals, emit, step=0, call_id=call_id, name=tool.name, tool=tool,
                                  arguments=params.arguments)
        policy = "allow" if decision in ("allow", "always") else "deny"
    if policy == "deny":
        raise ViewToolRefusedError(f"you did not allow {params.name!r} of {params.id!r} to run for its view")
    result = await conn.session.call_tool_raw(definition.name, params.arguments)
    return AppToolResult(result=result.model_dump(mode="json", by_alias=True, exclude_none=True))
