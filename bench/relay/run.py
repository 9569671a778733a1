"""tools/call round trips (the fixture's ``echo``): our relay vs direct stdio vs the fixture's own HTTP mode.

    .venv/bin/python bench/relay/run.py [--calls 200] [--rounds 3]

Every target is driven by the same official SDK client; targets are interleaved round by round so
machine noise spreads evenly. Prints p50 / p99 latency (ms) and calls/s at 1 and 16 sessions.
Loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("ORIZURU_SHARED", ROOT.parent / "shared"))
FIXTURE = SHARED / "mcp" / "conformance_server.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {port}")


def start_fixture_http() -> tuple[subprocess.Popen, str, dict[str, str]]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(FIXTURE), "--http", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    return proc, f"http://127.0.0.1:{port}/mcp", {}


def start_relay(tmp: Path) -> tuple[subprocess.Popen, str, dict[str, str]]:
    config = tmp / "relay.json"
    config.write_text(json.dumps({"mcpServers": {"fixture": {"command": sys.executable, "args": [str(FIXTURE)]}}}))
    (tmp / "index.html").write_text("bench")
    proc = subprocess.Popen([sys.executable, "-m", "server", "--dist", str(tmp), "--port", "0", "--config",
                             str(config), "--max-sessions", "64"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    line = proc.stdout.readline().decode()
    base, token = re.search(r"(http://\S+?)/#token=(\S+)", line).groups()
    return proc, f"{base}/mcp/fixture", {"Authorization": f"Bearer {token}"}


@asynccontextmanager
async def http_client(url: str, headers: dict[str, str]):
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            yield client


@asynccontextmanager
async def stdio_client():
    async with Client(StdioServerParameters(command=sys.executable, args=[str(FIXTURE)]), mode="legacy") as client:
        yield client


async def session_calls(connect, calls: int, latencies: list[float], ready: anyio.Event, go: anyio.Event,
                        count: list[int]) -> None:
    async with connect() as client:
        await client.call_tool("echo", {"message": "warm-up"})
        count[0] += 1
        if count[0] == count[1]:
            ready.set()
        await go.wait()
        for i in range(calls):
            t0 = time.perf_counter()
            await client.call_tool("echo", {"message": f"m{i}"})
            latencies.append((time.perf_counter() - t0) * 1000)


async def measure(connect, sessions: int, calls: int) -> tuple[list[float], float]:
    latencies: list[float] = []
    ready, go, count = anyio.Event(), anyio.Event(), [0, sessions]
    async with anyio.create_task_group() as tg:
        for _ in range(sessions):
            tg.start_soon(session_calls, connect, calls, latencies, ready, go, count)
        await ready.wait()
        t0 = time.perf_counter()
        go.set()
    return latencies, len(latencies) / (time.perf_counter() - t0)


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200, help="calls per session per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="relay-bench-"))
    fixture_proc, fixture_url, fixture_headers = start_fixture_http()
    relay_proc, relay_url, relay_headers = start_relay(tmp)
    targets = {
        "direct stdio": stdio_client,
        "fixture own HTTP": lambda: http_client(fixture_url, fixture_headers),
        "orizuru relay": lambda: http_client(relay_url, relay_headers),
    }
    results: dict[tuple[str, int], tuple[list[float], list[float]]] = {}
    try:
        for _ in range(args.rounds):
            for sessions in (1, 16):
                for name, connect in targets.items():
                    lat, rate = await measure(connect, sessions, args.calls if sessions == 1 else args.calls // 4)
                    acc = results.setdefault((name, sessions), ([], []))
                    acc[0].extend(lat)
                    acc[1].append(rate)
    finally:
        for proc in (fixture_proc, relay_proc):
            proc.terminate()
            proc.wait(timeout=15)
    print(f"{'target':<18} {'sessions':>8} {'p50 ms':>8} {'p99 ms':>8} {'calls/s':>8}")
    for (name, sessions), (lat, rates) in results.items():
        print(f"{name:<18} {sessions:>8} {pct(lat, 50):>8.2f} {pct(lat, 99):>8.2f} {statistics.median(rates):>8.0f}")


if __name__ == "__main__":
    anyio.run(main)
