"""Helpers for the relay tests: a real relay process on 127.0.0.1, MCP SDK clients, child accounting."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FIXTURE = ROOT / "tests" / "fixtures" / "mcp" / "conformance_server.py"
FAKE = HERE / "fake_server.py"
SDK_SERVER = ROOT / "tests" / "pycore" / "mcp" / "sdk_server.py"
NODE_BIN = ROOT / "node_modules" / ".bin"
URL_LINE = re.compile(r"Orizuru is running at (http://\S+?)/#token=(\S+)")


def python_server(script: Path, **extra: object) -> dict[str, object]:
    return {"command": sys.executable, "args": [str(script)], **extra}


@dataclass
class RunningRelay:
    proc: subprocess.Popen[bytes]
    base: str
    token: str
    log: Path

    def url(self, name: str, kind: str = "mcp") -> str:
        return f"{self.base}/{kind}/{name}"

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def children(self) -> set[int]:
        """Live direct children of the relay process."""
        return {pid for pid in _children_of(self.proc.pid) if _alive(pid)}


def _children_of(pid: int) -> set[int]:
    found: set[int] = set()
    for path in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found.update(int(p) for p in path.read_text().split())
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def alive(pid: int) -> bool:
    return _alive(pid)


def wait_until(predicate, timeout: float = 15.0, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dist")
    (path / "index.html").write_text("<!doctype html><title>Orizuru test</title>")
    return path


@contextmanager
def relay(dist: Path, tmp: Path, servers: dict[str, dict[str, object]] | None, *args: str,
          env: dict[str, str] | None = None) -> Iterator[RunningRelay]:
    """``python -m server`` on a free 127.0.0.1 port; stopped (SIGTERM, then SIGKILL) on exit."""
    argv = [sys.executable, "-m", "server", "--dist", str(dist), "--port", "0", *args]
    if servers is not None:
        config = tmp / f"relay-config-{time.monotonic_ns()}.json"
        config.write_text(json.dumps({"mcpServers": servers}))
        argv += ["--config", str(config)]
    log = tmp / f"relay-{time.monotonic_ns()}.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=err,
                                env=env if env is not None else os.environ.copy())
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        match = URL_LINE.search(line)
        assert match, f"relay did not start: {line!r} {log.read_text()}"
        yield RunningRelay(proc, match.group(1), match.group(2), log)
    finally:
        stop(proc)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout:
        proc.stdout.close()


@asynccontextmanager
async def mcp_client(url: str, token: str | None, transport: str = "mcp", mode: str = "legacy", **kwargs):
    """The official SDK client, through the relay, with the bearer token; ``mode="auto"`` probes ``server/discover``
    first (MCP 2026-07-28), as the page does."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if transport == "sse":
        connection = sse_client(url, headers=headers)
        async with Client(connection, mode="legacy", **kwargs) as client:
            yield client
        return
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode, **kwargs) as client:
            yield client


def text(result) -> str:
    return "".join(part.text for part in result.content if part.type == "text")
