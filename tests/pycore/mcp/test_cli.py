"""``python -m pycore mcp URL tools|call`` against the SDK server."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from mcp_servers import ROOT, sdk_server

from pycore.mcp.cli import parse_headers


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    server, url = sdk_server("http")
    with server:
        yield url


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pycore", "mcp", *args], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)


def test_tools(url: str) -> None:
    proc = cli(url, "tools", "--header", "X-Test: 1")
    assert proc.returncode == 0, proc.stderr
    tools = json.loads(proc.stdout)
    assert "echo" in [tool["name"] for tool in tools] and "inputSchema" in tools[0]


def test_call(url: str) -> None:
    proc = cli(url, "call", "add", '{"a": 2, "b": 3}')
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["content"][0]["text"] == "5"


def test_call_tool_error_exits_1(url: str) -> None:
    proc = cli(url, "call", "fail", "{}")
    assert proc.returncode == 1 and json.loads(proc.stdout)["isError"] is True


def test_bad_arguments_and_unreachable() -> None:
    assert cli("http://127.0.0.1:9/mcp", "call", "x", "not json").returncode == 2
    proc = cli("http://127.0.0.1:9/mcp", "tools")
    assert proc.returncode == 3 and "MCPConnectionError" in proc.stderr


def test_parse_headers() -> None:
    assert parse_headers(["Authorization: Bearer a:b", "X-A:1"]) == {"Authorization": "Bearer a:b", "X-A": "1"}
    with pytest.raises(ValueError):
        parse_headers(["nocolon"])
