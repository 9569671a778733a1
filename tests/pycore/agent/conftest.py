"""Fixtures the loop tests share: two real MCP servers (agent_mcp_server.py, official SDK) on loopback."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVER = Path(__file__).with_name("agent_mcp_server.py")


@pytest.fixture(scope="module")
def two_servers() -> Iterator[tuple[str, str]]:
    """Two servers with the same tools: their URLs, for the tests of whose tool a choice is for."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))
    from mcp_servers import free_port, running

    ports = free_port(), free_port()
    with running([sys.executable, str(SERVER), str(ports[0])], ports[0]), \
            running([sys.executable, str(SERVER), str(ports[1])], ports[1]):
        yield f"http://127.0.0.1:{ports[0]}/mcp", f"http://127.0.0.1:{ports[1]}/mcp"
