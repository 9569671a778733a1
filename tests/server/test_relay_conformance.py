"""The official MCP conformance suite's server scenarios against /mcp/fixture, the fixture run over stdio.

The fixture passes all of them over its own HTTP, so every failure here would be the relay's.
31 with the suite's 0.2.0-alpha.12 (its default, 2025-11-25 set): ``server-session-lifecycle`` is new.
The 2026-07-28 server scenarios (``--requirements 2026-07-28``, sessionless requests to the relay's shared child)
fail where the fixture fails them over its own HTTP (it has no tools for Multi Round-Trip Requests, tasks or
``Mcp-Param`` headers): behind the relay each scenario must pass and fail exactly the checks it does there.
The suite cannot send headers, hence --dangerously-omit-token; Host and Origin checks stay on.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import FIXTURE, NODE_BIN, ROOT, python_server, relay

sys.path.append(str(ROOT / "tests" / "pycore" / "mcp"))
from mcp_servers import free_port, running  # noqa: E402

SCENARIO = re.compile(r"^[✓✗] (\S+): (\d+) passed, (\d+) failed", re.MULTILINE)
EXPECTED_SCENARIOS = 31


def conformance(url: str, *args: str) -> tuple[dict[str, tuple[int, int]], str]:
    """The suite's server scenarios against ``url``: passed and failed checks by scenario, and its output."""
    suite = NODE_BIN / "conformance"
    if not suite.exists() or not FIXTURE.is_file():
        pytest.fail(f"needs `npm ci` ({suite}) and the shared fixture ({FIXTURE})")
    env = {"PATH": f"{NODE_BIN}:/usr/bin:/bin"}  # node 22 from npm first
    run = subprocess.run([str(suite), "server", "--url", url, *args], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=600)
    return {name: (int(ok), int(bad)) for name, ok, bad in SCENARIO.findall(run.stdout)}, run.stdout


def behind_the_relay(dist, tmp_path, *args: str) -> tuple[dict[str, tuple[int, int]], str]:
    with relay(dist, tmp_path, {"fixture": python_server(FIXTURE)}, "--dangerously-omit-token",
               "--idle-timeout", "5") as r:
        return conformance(r.url("fixture"), *args)


def test_conformance_server_scenarios_all_pass_behind_the_relay(dist, tmp_path):
    results, output = behind_the_relay(dist, tmp_path)
    failed = {name: counts for name, counts in results.items() if counts[1]}
    assert not failed, output[-4000:]
    assert len(results) == EXPECTED_SCENARIOS, output[-4000:]


def test_conformance_2026_scenarios_behind_the_relay_match_the_fixture_over_its_own_http(dist, tmp_path):
    port = free_port()
    with running([sys.executable, str(FIXTURE), "--http", "--port", str(port)], port):
        direct, _ = conformance(f"http://127.0.0.1:{port}/mcp", "--requirements", "2026-07-28")
    relayed, output = behind_the_relay(dist, tmp_path, "--requirements", "2026-07-28")
    assert direct["server-stateless"][0] > 20 and direct["tools-call-with-progress"] == (2, 0)  # it did run
    differs = {name: {"direct": direct.get(name), "relayed": relayed.get(name)}
               for name in direct.keys() | relayed.keys() if direct.get(name) != relayed.get(name)}
    assert not differs, output[-6000:]
