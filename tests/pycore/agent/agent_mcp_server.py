"""A real MCP server (official SDK) for the loop tests: ``python agent_mcp_server.py PORT``.

``hang`` never answers on its own and records when the client cancels it (``notifications/cancelled``
makes the SDK cancel the handler); ``cancellations`` reports those records.
"""

from __future__ import annotations

import asyncio
import sys

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
server = MCPServer(name="agent-test", version="2.0")
CANCELLED: list[str] = []


class Weather(BaseModel):
    city: str
    celsius: float


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def get_weather(location: str, units: str = "c") -> Weather:
    """Current weather (read-only, closed world)."""
    return Weather(city=location, celsius=21.5)


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def delete_file(path: str) -> str:
    """Deletes a file (destructive)."""
    return f"deleted {path}"


@server.tool()
def broken() -> str:
    """Always fails."""
    raise ValueError("the backend is down")


@server.tool()
def picture() -> list[TextContent | ImageContent]:
    """A caption and an image."""
    return [TextContent(type="text", text="a red pixel"),
            ImageContent(type="image", data=PNG_1PX, mime_type="image/png")]


@server.tool()
async def hang(label: str, ctx: Context) -> str:
    """Reports progress once, then waits until cancelled."""
    await ctx.report_progress(progress=1, total=10, message="started")
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        CANCELLED.append(label)
        raise
    return "never"


@server.tool()
def cancellations() -> str:
    """Labels of the hang calls the client cancelled."""
    return ",".join(CANCELLED)


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Adds a tool that calls itself read-only, and announces it: ``notifications/tools/list_changed`` on an older
    session, and on the ``subscriptions/listen`` streams of 2026-07-28 clients (the only place that revision
    carries it)."""
    server.add_tool(lambda: f"{name} ran", name=name, description="added at runtime",
                    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    await ctx.session.send_tool_list_changed()
    await ctx.notify_tools_changed()
    return "added"


@server.resource("test://readme", mime_type="text/plain")
def readme() -> str:
    """The readme."""
    return "read me first"


@server.prompt()
def review(language: str) -> str:
    """Review some code."""
    return f"Please review this {language} code."


if __name__ == "__main__":
    uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
