"""A real MCP server on the official SDK, for the client tests: ``python sdk_server.py PORT http|sse|modern``, or
``python sdk_server.py stdio-modern``: the same server over stdio speaking only 2026-07-28 (the relay's tests).

``http`` is the server as an older one (MCP 2025-11-25 and before) is: a request outside a session it opened with
``initialize`` (a ``server/discover`` probe) gets 400, as the 1.x SDK answered. ``modern`` speaks only 2026-07-28:
``initialize`` gets ``-32022`` naming it; ``modern-cached`` is that server with its lists' results fresh for
:data:`LIST_TTL_MS` (``ttlMs``). The SDK itself speaks both.

Tools cover every content type, a slow tool with progress, a failing tool, a tool that adds a tool
(``notifications/tools/list_changed``; on 2026-07-28 to the ``subscriptions/listen`` streams), one that logs
(``notifications/message``), two that ask the user
(elicitation: a form, a URL), one that asks the client's model (sampling), one that lists the client's
roots, and ``tools/list`` answers in three pages.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Annotated, Any, Literal

import stdio_eras
import uvicorn
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.types import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    ListToolsResult,
    ModelHint,
    ModelPreferences,
    ResourceLink,
    SamplingMessage,
    TextContent,
    TextResourceContents,
)
from mcp_servers import modern_only, older, refusing
from pydantic import BaseModel, Field

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV_TINY = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
LIST_TTL_MS = 60_000  # modern-cached: a list result stays fresh this long
PAGE_SIZES = (3, 2)  # then the rest: three pages of different sizes


class PagedServer(MCPServer):
    async def _handle_list_tools(self, ctx: Any, params: Any) -> ListToolsResult:
        tools = await self.list_tools()
        start = int(params.cursor) if params is not None and params.cursor else 0
        size = PAGE_SIZES[0] if start == 0 else PAGE_SIZES[1] if start == PAGE_SIZES[0] else len(tools)
        end = start + size
        return ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)


server = PagedServer(name="orizuru-test", version="1.0")


class Weather(BaseModel):
    city: str
    celsius: float


@server.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    return f"Echo: {message}"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def weather(city: str) -> Weather:
    """Structured output."""
    return Weather(city=city, celsius=21.5)


@server.tool()
def fail(reason: str = "boom") -> str:
    """Always fails."""
    raise ValueError(reason)


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Sleeps, reporting progress."""
    steps = 4
    for i in range(steps):
        await ctx.report_progress(progress=i + 1, total=steps, message=f"step {i + 1}")
        await asyncio.sleep(seconds / steps)
    return f"slept {seconds}"


@server.tool()
def everything() -> list[TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource]:
    """Every content type."""
    return [
        TextContent(type="text", text="hello"),
        ImageContent(type="image", data=PNG_1PX, mime_type="image/png"),
        AudioContent(type="audio", data=WAV_TINY, mime_type="audio/wav"),
        ResourceLink(type="resource_link", uri="file:///etc/passwd", name="passwd"),
        EmbeddedResource(type="resource", resource=TextResourceContents(uri="test://doc", text="embedded text")),
    ]


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Adds a tool and announces the change."""
    server.add_tool(lambda: "new", name=name, description="added at runtime")
    await ctx.session.send_tool_list_changed()  # older sessions
    await ctx.notify_tools_changed()  # 2026-07-28: every subscriptions/listen stream that asked for tool changes
    return "added"


@server.tool()
async def chatty(secret: str, ctx: Context) -> str:
    """Logs as it works: a plain message, structured data, and one that quotes the credential it was sent."""
    await ctx.info("starting", logger_name="chatty")
    await ctx.warning({"step": 2, "note": "structured"})
    await ctx.error(f"the header was Bearer {secret}")
    await ctx.log("debug", "x" * 10_000)
    return "logged"


class Booking(BaseModel):
    name: str = Field(description="Name for the booking", min_length=2)
    guests: int = Field(2, ge=1, le=12, description="How many people")
    time: Literal["18:00", "19:00", "20:00"] = "19:00"
    window: bool = False


@server.tool()
async def book(restaurant: str, ctx: Context) -> str:
    """Books a table, asking the user for the details (elicitation, form mode)."""
    answer = await ctx.elicit(f"Book a table at {restaurant}?", schema=Booking)
    if answer.action == "accept":
        b = answer.data
        return f"booked {b.guests} at {b.time} for {b.name}, window {b.window}"
    return f"not booked ({answer.action})"


@server.tool()
async def pay(amount: int, ctx: Context) -> str:
    """Sends the user to a payment page (elicitation, URL mode)."""
    answer = await ctx.elicit_url(f"Pay {amount} EUR on the shop's page", "https://shop.example/pay?id=7", "pay-7")
    return f"payment {answer.action}"


@server.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Asks the client's model for a summary (sampling)."""
    result = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))],
        max_tokens=5000, system_prompt="Be brief.", related_request_id=ctx.request_id,
        model_preferences=ModelPreferences(hints=[ModelHint(name="claude-haiku")]))
    content = result.content
    return f"summary by {result.model} ({result.stop_reason}): {getattr(content, 'text', content)}"


@server.tool()
async def roots(ctx: Context) -> str:
    """The client's roots (roots/list)."""
    listed = await ctx.session.list_roots()
    return ", ".join(f"{r.name or '-'}={r.uri}" for r in listed.roots) or "no roots"


@server.resource("test://static", mime_type="text/plain")
def static() -> str:
    """A static text resource."""
    return "static content"


@server.prompt()
def greet(name: str) -> str:
    """Greets someone."""
    return f"Hello, {name}!"


class Guests(BaseModel):
    name: str = Field(description="Name for the booking", min_length=2)
    guests: int = Field(2, ge=1, le=12, description="How many people")


class Seat(BaseModel):
    window: bool = Field(False, description="By the window")


def ask_guests(restaurant: str) -> Elicit[Guests]:
    return Elicit(f"Who is coming to {restaurant}?", Guests)


def ask_seat(restaurant: str) -> Elicit[Seat]:
    return Elicit(f"Where would you like to sit at {restaurant}?", Seat)


def ask_window(guests: Annotated[Guests, Resolve(ask_guests)]) -> Elicit[Seat]:
    return Elicit(f"A table by the window for {guests.name}?", Seat)


@server.tool()
async def reserve(restaurant: str, guests: Annotated[Guests, Resolve(ask_guests)],
                  seat: Annotated[Seat, Resolve(ask_seat)]) -> str:
    """Books a table: two questions at once (2026-07-28: one input_required round asking both)."""
    return f"reserved {restaurant} for {guests.guests} under {guests.name}, window {seat.window}"


@server.tool()
async def reserve_later(restaurant: str, seat: Annotated[Seat, Resolve(ask_window)]) -> str:
    """Books a table: a question that depends on the answer to another (two input_required rounds)."""
    return f"reserved {restaurant}, window {seat.window}"


def main() -> None:
    if sys.argv[1] == "stdio-modern":
        stdio_eras.serve(server, "modern")
        return
    port, kind = int(sys.argv[1]), sys.argv[2]
    if kind == "modern-cached":
        kind = "modern"
        server._lowlevel_server.cache_hints = {method: CacheHint(ttl_ms=LIST_TTL_MS) for method in (
            "tools/list", "prompts/list", "resources/list")}
    if kind == "sse":
        app = server.sse_app()
    else:
        app = refusing(server.streamable_http_app(), older if kind == "http" else modern_only)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
