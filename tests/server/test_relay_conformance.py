"""The official MCP conformance suite's server scenarios against /mcp/fixture, the fixture run over stdio.

The fixture passes all of them over its own HTTP, so every failure here would be the relay's.
31 with the suite's 0.2.0-alpha.12 (its default, 2025-11-25 set): ``server-session-lifecycle`` is new; the 2026-07-28
server scenarios (``--requirements 2026-07-28``) are not run, as the relay speaks the handshake revisions only.
The suite cannot send headers, hence --dangerously-omit-token; Host and Origin checks stay on.
"""

from __future__ import annotations

import re
import subprocess

import pytest
from conftest import FIXTURE, NODE_BIN, ROOT, python_server, relay

SCENARIO = re.compile(r"^[✓✗] (\S+): (\d+) passed, (\d+) failed", re.MULTILINE)
EXPECTED_SCENARIOS = 31


def test_conformance_server_scenarios_all_pass_behind_the_relay(dist, tmp_path):
    conformance = NODE_BIN / "conformance"
    if not conformance.exists() or not FIXTURE.is_file():
        pytest.fail(f"needs `npm ci` ({conformance}) and the shared fixture ({FIXTURE})")
    env = {"PATH": f"{NODE_BIN}:/usr/bin:/bin"}  # node 22 from npm first
    with relay(dist, tmp_path, {"fixture": python_server(FIXTURE)}, "--dangerously-omit-token",
               "--idle-timeout", "5") as r:
        run = subprocess.run([str(conformance), "server", "--url", r.url("fixture")], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=300)
    results = {name: (int(ok), int(bad)) for name, ok, bad in SCENARIO.findall(run.stdout)}
    failed = {name: counts for name, counts in results.items() if counts[1]}
    assert not failed, run.stdout[-4000:]
    assert len(results) == EXPECTED_SCENARIOS, run.stdout[-4000:]
