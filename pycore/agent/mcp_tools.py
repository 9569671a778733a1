"""An MCP session's tools as agent tools.

A call goes through :meth:`pycore.mcp.ClientSession.call_tool_raw` (progress reported as it comes;
cancelling the call sends ``notifications/cancelled``); a call its server runs as a task gives the loop its
:class:`~pycore.contract.TaskHandle` (``ToolContext.on_task``), which the page keeps to pick it up again.
The result is kept twice:

- for the page, the content blocks as the server sent them (MCP form: text, image, audio,
  ``resource_link``, embedded ``resource``) and ``structuredContent``;
- for the model, what :func:`pycore.mcp.map_result` makes of them: text, images the vendors take,
  a note for audio, links (never fetched) and blobs, the structured content as JSON when the
  server sent no text, and a note when it breaks the tool's ``outputSchema``.

``isError`` becomes ``is_error``: the model reads the error text and may recover.
"""

from __future__ import annotations

import time
from typing import Any

import mcp_types as t

from pycore.agent.tools import AgentTool, ToolContext, ToolResult
from pycore.contract import TaskHandle
from pycore.mcp import ClientSession, map_result
from pycore.mcp.apps import for_model
from pycore.messages import ImagePart, TextPart


def session_tools(server_id: str, session: ClientSession, tools: list[t.Tool] | None = None) -> list[AgentTool]:
    """The tools the model is offered: all but those an MCP App keeps for its views (``visibility: ["app"]``)."""
    return [mcp_tool(server_id, session, tool) for tool in (session.tools if tools is None else tools)
            if for_model(tool)]


def mcp_tool(server_id: str, session: ClientSession, tool: t.Tool) -> AgentTool:
    async def handler(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        # The session's own timeout a little past the loop's, so the loop's message is the one seen.
        timeout = context.timeout + 1 if context.timeout else None

        def on_task(created: dict[str, Any]) -> None:
            if context.on_task is not None:
                context.on_task(task_handle(server_id, tool.name, context.call_id, created))

        result = await session.call_tool_raw(tool.name, arguments, timeout=timeout, on_progress=context.on_progress,
                                             on_task=on_task)
        return tool_result(result, tool.output_schema)

    annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else None
    return AgentTool(
        name=tool.name,
        description=tool.description or tool.title or "",
        input_schema=tool.input_schema or {"type": "object"},
        handler=handler,
        source=f"mcp:{server_id}",
        annotations=annotations,
    )


def task_handle(server_id: str, name: str, call_id: str, created: dict[str, Any]) -> TaskHandle:
    """What the page keeps of a call its server runs as a task, to pick it up again after a reload."""
    ttl = created.get("ttlMs")
    return TaskHandle(server_id=server_id, task_id=str(created["taskId"]), call_id=call_id, name=name, tool=name,
                      created=round(time.time() * 1000),
                      ttl_ms=ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0 else None)


def tool_result(result: t.CallToolResult, output_schema: dict[str, Any] | None = None) -> ToolResult:
    mapped = map_result(result, output_schema)
    for_model: list[TextPart | ImagePart] = [
        TextPart(text=part["text"]) if part["type"] == "text"
        else ImagePart(data=part["data"], mime_type=part["mime_type"])
        for part in mapped.content
    ]
    content = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content]
    return ToolResult(content=content, is_error=mapped.is_error, structured=result.structured_content,
                      for_model=for_model, schema_problem=mapped.schema_violation)
