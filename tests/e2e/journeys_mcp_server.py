"""A small stdio MCP server (official `mcp` SDK) for the tool journeys, run by the relay from a
test config. Its tool matches the call in the real recording openai/chat-stream-tool-call
(``get_capital`` with ``{"country": "UK"}``), so a replayed model turn runs a real tool."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer(name="capitals", version="1.0.0")

CAPITALS = {"UK": "London", "France": "Paris", "Japan": "Tokyo"}


@server.tool()
async def get_capital(country: str, ctx: Context) -> str:
    """The capital city of a country."""
    await ctx.info(f"looking up {country}", logger_name="capitals")  # shown in the Tools panel's log
    if country not in CAPITALS:
        raise ValueError(f"no capital known for {country!r}")
    return f"The capital of {country} is {CAPITALS[country]} (answered by the capitals MCP server)."


@server.resource("capitals://list", name="capitals", mime_type="text/plain")
def capitals() -> str:
    return "\n".join(f"{k}: {v}" for k, v in CAPITALS.items())


if __name__ == "__main__":
    server.run("stdio")
