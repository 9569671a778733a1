"""The client against ``@modelcontextprotocol/server-everything`` in its streamable HTTP mode (TypeScript SDK)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp_servers import NODE, ROOT, free_port, running

from pycore.mcp import ClientSession

EVERYTHING = ROOT / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
pytestmark = pytest.mark.skipif(not NODE.exists() or not EVERYTHING.exists(), reason="npm devDependencies missing")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    with running([str(NODE), str(EVERYTHING), "streamableHttp"], port, env={"PORT": str(port)}):
        yield f"http://127.0.0.1:{port}/mcp"


async def test_everything(url: str) -> None:
    async with ClientSession(url) as mcp:
        assert mcp.protocol_version in ("2025-06-18", "2025-11-25")
        names = {tool.name for tool in await mcp.list_tools()}
        assert "echo" in names
        assert (await mcp.call_tool("echo", {"message": "hi"})).text().endswith("hi")
        image_tool = next((n for n in names if "image" in n.lower()), None)
        if image_tool:
            out = await mcp.call_tool(image_tool, {})
            assert any(part["type"] == "image" for part in out.content) or out.attachments
        resources = await mcp.list_resources()
        assert resources
        await mcp.read_resource(str(resources[0].uri))
        prompts = await mcp.list_prompts()
        assert prompts
        await mcp.ping()
