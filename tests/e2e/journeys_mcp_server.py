"""A small stdio MCP server (official `mcp` SDK) for the tool journeys, run by the relay from a
test config. Its tool matches the call in the real recording openai/chat-stream-tool-call
(``get_capital`` with ``{"country": "UK"}``), so a replayed model turn runs a real tool; ``book_table`` asks the
user for the booking's details (elicitation); ``list_roots`` says which roots the client gave;
``describe_capitals`` asks the client's model (sampling).

It speaks only the handshake revisions (a ``server/discover`` probe is refused), as an older server does: its
server-to-client requests exist only there. ``journeys_mcp_server.py modern`` speaks only MCP 2026-07-28."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ImageContent, ResourceLink, SamplingMessage, TextContent
from pydantic import BaseModel, Field

sys.path.append(str(Path(__file__).resolve().parents[1] / "pycore" / "mcp"))
import stdio_eras  # noqa: E402

server = MCPServer(name="capitals", version="1.0.0")

CAPITALS = {"UK": "London", "France": "Paris", "Japan": "Tokyo"}


@server.tool()
async def get_capital(country: str, ctx: Context) -> str:
    """The capital city of a country."""
    await ctx.info(f"looking up {country}", logger_name="capitals")  # shown in the Tools panel's log
    if country not in CAPITALS:
        raise ValueError(f"no capital known for {country!r}")
    return f"The capital of {country} is {CAPITALS[country]} (answered by the capitals MCP server)."


class Table(BaseModel):
    """Every kind of field a form may ask for: text, an email, a number, one choice, several, a switch."""

    name: str = Field(description="Name for the booking", min_length=2)
    email: str = Field(description="Where the confirmation goes", json_schema_extra={"format": "email"})
    guests: int = Field(2, ge=1, le=12, description="How many people")
    extras: list[Literal["wine", "cake"]] = Field(default_factory=list, description="Anything to add")
    time: Literal["18:00", "19:00", "20:00"] = "19:00"
    window: bool = False


@server.tool()
async def book_table(city: str, ctx: Context) -> str:
    """Books a table in a city, asking the user for the details (an elicitation form)."""
    answer = await ctx.elicit(f"Book a table in {city}?", schema=Table)
    if answer.action != "accept":
        return f"Not booked: the user chose {answer.action}."
    return f"Booked in {city}: " + ", ".join(f"{k}={v}" for k, v in answer.data.model_dump().items())


@server.tool()
async def describe_capitals(ctx: Context) -> str:
    """Asks the client's model to describe the capitals (sampling)."""
    listing = ", ".join(CAPITALS.values())
    result = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=f"Describe in one line: {listing}"))],
        max_tokens=5000, system_prompt="Be brief.", related_request_id=ctx.request_id)
    return f"The model said: {getattr(result.content, 'text', '')}"


class CapitalFacts(BaseModel):
    country: str
    capital: str


@server.tool()
def capital_facts(country: str) -> CapitalFacts:
    """The capital of a country, as data (structured content)."""
    return CapitalFacts(country=country, capital=CAPITALS.get(country, "unknown"))


@server.tool()
def where_is_the_list() -> list[TextContent | ResourceLink]:
    """Where the list of capitals is (a resource link)."""
    return [TextContent(type="text", text="The list is a resource of this server."),
            ResourceLink(type="resource_link", uri="capitals://list", name="capitals", mime_type="text/plain")]


@server.tool()
async def list_roots(ctx: Context) -> str:
    """The folders the client lets this server know about (roots/list)."""
    listed = await ctx.session.list_roots()
    return "; ".join(f"{r.name or '-'}={r.uri}" for r in listed.roots) or "no roots"


# Hostile questions (SECURITY.md-style cases T-Q*, T-M*): markup where text belongs, links that must not open.
HTML = '<img src="http://127.0.0.1:9/x" onerror="window.hacked = 1"><b>bold</b>'


class Odd(BaseModel):
    choice: Literal["a", "b"] = Field("a", title=f"Pick {HTML}", description=f"About {HTML}")


@server.tool()
async def odd_question(ctx: Context) -> str:
    """Asks with markup in the message, a field's title and its description."""
    answer = await ctx.elicit(f"Question {HTML}", schema=Odd)
    return f"answered {answer.action}"


@server.tool()
async def odd_link(url: str, ctx: Context) -> str:
    """Asks the user to open a URL."""
    answer = await ctx.elicit_url(f"Open {HTML}", url, "odd-1")
    return f"link {answer.action}"


@server.tool()
async def odd_sampling(ctx: Context) -> str:
    """Asks the model with markup in the system prompt and the message."""
    result = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=f"Say {HTML}"))],
        max_tokens=50, system_prompt=f"System {HTML}", related_request_id=ctx.request_id)
    return f"sampled {getattr(result.content, 'text', '')}"


RED_SQUARE = "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR4nGP4z8AARwzEcQCukw/x0F8jngAAAABJRU5ErkJggg=="


@server.tool()
async def sampling_with_image(ctx: Context) -> str:
    """Asks the model about an image it sends along (T-M2: the user must see it before it goes)."""
    content = [TextContent(type="text", text="What colour is this square?"),
               ImageContent(type="image", data=RED_SQUARE, mime_type="image/png")]
    result = await ctx.session.create_message([SamplingMessage(role="user", content=content)], max_tokens=50,
                                              related_request_id=ctx.request_id)
    return f"sampled {getattr(result.content, 'text', '')}"


@server.tool()
async def big_sampling(ctx: Context) -> str:
    """Asks the model with 2 MB of text (T-M3)."""
    text = "Summarize: " + "lorem ipsum " * (2_000_000 // 12)
    result = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=text))], max_tokens=50,
        related_request_id=ctx.request_id)
    return f"sampled {getattr(result.content, 'text', '')}"


@server.tool()
async def many_samplings(ctx: Context) -> str:
    """Asks the model 12 times at once (T-M4): how many were refused outright."""

    async def one(i: int) -> str:
        try:
            await ctx.session.create_message(
                [SamplingMessage(role="user", content=TextContent(type="text", text=f"Request {i}"))], max_tokens=5,
                related_request_id=ctx.request_id)
            return "answered"
        except Exception as e:  # noqa: BLE001 - the client's refusal, counted
            return "refused" if "at once" in str(e) else "denied"

    outcomes = await asyncio.gather(*(one(i) for i in range(12)))
    return ", ".join(f"{kind}={outcomes.count(kind)}" for kind in ("answered", "refused", "denied"))


@server.resource("capitals://list", name="capitals", mime_type="text/plain")
def capitals() -> str:
    return "\n".join(f"{k}: {v}" for k, v in CAPITALS.items())


if __name__ == "__main__":
    stdio_eras.serve(server, "modern" if sys.argv[1:] == ["modern"] else "legacy")
