"""The program the MCP conformance suite drives: ``conformance client --command "python conformance_client.py"``.

The suite appends the test server's URL and names the scenario in ``MCP_CONFORMANCE_SCENARIO``.
We connect, list the tools, call each one with arguments built from its input schema, and close.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from pycore.mcp import ClientSession, MCPError  # noqa: E402

SAMPLE = {"number": 2, "integer": 3, "string": "x", "boolean": True}


def sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    return {name: SAMPLE.get(spec.get("type"), None) for name, spec in properties.items() if isinstance(spec, dict)}


async def main(url: str) -> int:
    async with ClientSession(url, timeout=20) as mcp:
        for tool in await mcp.list_tools():
            try:
                out = await mcp.call_tool(tool.name, sample_arguments(tool.input_schema))
                print(f"{tool.name}: {out.text()[:200]}")
            except MCPError as e:
                print(f"{tool.name}: {e}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    print(f"scenario {os.environ.get('MCP_CONFORMANCE_SCENARIO')}", file=sys.stderr)
    sys.exit(asyncio.run(main(sys.argv[-1])))
