"""The official MCP conformance suite's client scenarios, driving our client through conformance_client.py.

Suite 0.2.0-alpha.12 (pinned in package-lock.json), the scenarios ``--requirements 2026-07-28`` and
``--requirements 2025-11-25`` hold for a browser client, auth aside; each run on its own (the suite run whole
starts them in parallel, and on a loaded machine some client runs pass the suite's 30 s). Pass counts:
2026-07-28: tools_call 2/2, request-metadata 6/6 (the _meta envelope, the version header, the retry at a listed
version), sep-2322-client-request-state 5/5 (Multi Round-Trip Requests), http-standard-headers 9/9,
http-custom-headers 18/18, http-invalid-tool-headers 12/12, json-schema-ref-no-deref 1/1,
json-schema-2020-12-preservation 9/9 (also in 2025-11-25). 2025-11-25: initialize 1/1, sse-retry 3/3,
elicitation-sep1034-client-defaults 5/5 (the form accepted as offered: the schema's defaults are sent).

The auth/* scenarios are in test_conformance_auth.py. Not passed on purpose: the extension scenarios for
machine clients (client credentials, enterprise-managed authorization, workload identity), which a browser
client has no use for; the 2025-03-26 back-compat auth scenarios (see test_conformance_auth.py and the README).
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from mcp_servers import HERE, NODE, ROOT

CONFORMANCE = ROOT / "node_modules/.bin/conformance"
EXPECTED = {
    # 2026-07-28
    "tools_call": (2, 2), "request-metadata": (6, 6), "sep-2322-client-request-state": (5, 5),
    "http-standard-headers": (9, 9), "http-custom-headers": (18, 18), "http-invalid-tool-headers": (12, 12),
    "json-schema-ref-no-deref": (1, 1), "json-schema-2020-12-preservation": (9, 9),
    # 2025-11-25 (and tools_call, json-schema-2020-12-preservation above)
    "initialize": (1, 1), "sse-retry": (3, 3), "elicitation-sep1034-client-defaults": (5, 5),
}

pytestmark = pytest.mark.skipif(not NODE.exists() or not CONFORMANCE.exists(), reason="npm devDependencies missing")


def run_scenario(name: str) -> tuple[int, int, str]:
    command = f"{sys.executable} {HERE / 'conformance_client.py'}"
    proc = subprocess.run(
        [str(NODE), str(CONFORMANCE), "client", "--command", command, "--scenario", name, "--timeout", "30000"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    found = re.search(r"Passed: (\d+)/(\d+)", proc.stdout + proc.stderr)
    assert found, proc.stdout[-2000:] + proc.stderr[-2000:]
    return int(found[1]), int(found[2]), proc.stdout


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_client_scenario(scenario: str) -> None:
    passed, total, output = run_scenario(scenario)
    assert (passed, total) == EXPECTED[scenario], output[-3000:]
