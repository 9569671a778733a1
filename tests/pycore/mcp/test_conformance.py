"""The official MCP conformance suite's client scenarios, driving our client through conformance_client.py.

Pass counts (conformance 0.1.16): initialize 1/1, tools_call 1/1, sse-retry 3/3,
elicitation-sep1034-client-defaults 5/5 (the form accepted as offered: the schema's defaults are sent), and 17
auth scenarios (267 checks, all passed: the 2025-11-25 and draft ones, OAuth driven by conformance_client.py
playing the browser).

Not passed on purpose: auth/2025-03-26-oauth-metadata-backcompat (its metadata claims an issuer other
than the URL it was fetched from, which RFC 8414 §3.3 and SECURITY.md T-A4 make us refuse);
auth/2025-03-26-oauth-endpoint-fallback (no metadata, so PKCE support cannot be verified, which MCP
2025-11-25 says MUST stop the flow); the extension scenarios (client credentials, cross-app access).
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from mcp_servers import HERE, NODE, ROOT

CONFORMANCE = ROOT / "node_modules/.bin/conformance"
EXPECTED = {
    "initialize": (1, 1), "tools_call": (1, 1), "sse-retry": (3, 3), "elicitation-sep1034-client-defaults": (5, 5),
    "auth/metadata-default": (13, 13), "auth/metadata-var1": (13, 13), "auth/metadata-var2": (13, 13),
    "auth/metadata-var3": (13, 13), "auth/basic-cimd": (13, 13), "auth/scope-from-www-authenticate": (14, 14),
    "auth/scope-from-scopes-supported": (14, 14), "auth/scope-omitted-when-undefined": (14, 14),
    "auth/scope-step-up": (24, 24), "auth/scope-retry-limit": (28, 28), "auth/token-endpoint-auth-basic": (18, 18),
    "auth/token-endpoint-auth-post": (18, 18), "auth/token-endpoint-auth-none": (18, 18),
    "auth/pre-registration": (13, 13), "auth/resource-mismatch": (2, 2), "auth/offline-access-scope": (12, 12),
    "auth/offline-access-not-supported": (14, 14),
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
