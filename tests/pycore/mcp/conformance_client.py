"""The program the MCP conformance suite drives: ``conformance client --command "python conformance_client.py"``.

The suite appends the test server's URL and names the scenario in ``MCP_CONFORMANCE_SCENARIO``
(``MCP_CONFORMANCE_CONTEXT`` carries pre-registered client credentials when a scenario has them).
We connect, list the tools, call each one with arguments built from its input schema, and close; a form the
server asks for (elicitation) is accepted as offered. A scenario that names the calls to make (its context's
``toolCalls``) gets those, with their arguments, instead; a ``json_schema_echo`` tool is sent another tool's
``inputSchema`` as we hold it (the 2020-12 preservation check); resources and prompts are listed and read.
When the server wants authorization we run our OAuth flow, playing the browser: open the
authorization URL without following its redirect, and hand the redirect back to ``finish``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from pycore.http.httpx import HttpxTransport  # noqa: E402
from pycore.mcp import ClientSession, MCPAuthRequiredError, MCPError  # noqa: E402
from pycore.mcp.oauth import OAuthClient  # noqa: E402

SAMPLE = {"number": 2, "integer": 3, "string": "x", "boolean": True}
REDIRECT = "http://localhost:3000/callback"
CIMD = "https://conformance-test.local/client-metadata.json"  # the suite's stand-in for our metadata document


def sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    return {name: SAMPLE.get(spec.get("type"), None) for name, spec in properties.items() if isinstance(spec, dict)}


async def play_browser(authorization_url: str) -> str:
    async with httpx.AsyncClient(follow_redirects=False) as client:
        response = await client.get(authorization_url)
    return response.headers.get("location", "")


async def authorize(oauth: OAuthClient, url: str, challenge: str | None, context: dict[str, Any]) -> None:
    request = await oauth.begin(url, REDIRECT, www_authenticate=challenge, client_id=context.get("client_id"),
                                client_secret=context.get("client_secret"))
    await oauth.finish(await play_browser(request.authorization_url))


async def accept_as_offered(params: dict[str, Any]) -> dict[str, Any]:
    """The user presses Accept without changing the form: the schema's defaults are what is sent (SEP-1034)."""
    return {"action": "accept", "content": {}}


async def session(url: str, oauth: OAuthClient) -> None:
    async with ClientSession(url, timeout=20, http=oauth.transport_for(url), on_elicit=accept_as_offered) as mcp:
        await exercise(mcp)


def planned_calls(tools: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    """The calls to make: the scenario's own (``toolCalls`` in its context), else each tool with sample arguments;
    ``json_schema_echo`` gets the first other tool's ``inputSchema``, exactly as the session holds it."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if isinstance(context.get("toolCalls"), list):
        return [(call["name"], call.get("arguments") or {}) for call in context["toolCalls"]]
    others = [tool.input_schema for tool in tools if tool.name != "json_schema_echo"]
    return [(tool.name, {"schema": others[0]} if tool.name == "json_schema_echo" and others
             else sample_arguments(tool.input_schema)) for tool in tools]


async def exercise(mcp: ClientSession) -> None:
    """Everything a scenario may look at: the tools called, resources and prompts listed and read."""
    for name, arguments in planned_calls(await mcp.list_tools()):
        await attempt(name, mcp.call_tool(name, arguments))
    capabilities = mcp.server.capabilities if mcp.server else None
    if capabilities and capabilities.resources:
        for resource in await mcp.list_resources():
            await attempt(str(resource.uri), mcp.read_resource(str(resource.uri)))
    if capabilities and capabilities.prompts:
        for prompt in await mcp.list_prompts():
            await attempt(prompt.name, mcp.get_prompt(prompt.name))


async def attempt(name: str, call: Any) -> None:
    try:
        out = await call
        print(f"{name}: {str(getattr(out, 'text', lambda: out)())[:200]}")
    except MCPAuthRequiredError:
        raise
    except MCPError as e:
        print(f"{name}: {e}", file=sys.stderr)


async def main(url: str) -> int:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    oauth = OAuthClient(HttpxTransport(), client_name="orizuru-conformance", client_metadata_url=CIMD)
    for _ in range(4):  # first try, then after authorizing (and after a step-up or two)
        try:
            await session(url, oauth)
            return 0
        except MCPAuthRequiredError as e:
            await authorize(oauth, url, e.www_authenticate, context)
    return 1


if __name__ == "__main__":
    print(f"scenario {os.environ.get('MCP_CONFORMANCE_SCENARIO')}", file=sys.stderr)
    sys.exit(asyncio.run(main(sys.argv[-1])))
