"""The official MCP conformance suite's auth scenarios (0.2.0-alpha.12) that a browser client should pass, for
MCP 2026-07-28 and 2025-11-25, driving our OAuth client through conformance_client.py (which plays the browser).

Pass counts: every check of each scenario below, including the DPoP extension (``auth/dpop``,
``auth/dpop-nonce``: DPoP-bound tokens, a fresh proof per request, nonces from the token endpoint and the MCP
server), the RFC 9207 ``iss`` checks and issuer-keyed credentials, and ``auth/authorization-server-migration``
(its server speaks only MCP 2026-07-28: the client follows the authorization server's move, registers again and
sends the first one's credentials nowhere).

Not passed on purpose: the 2025-03-26 back-compat scenarios (see test_conformance.py) and the extension
scenarios for machine clients (client credentials, enterprise-managed authorization, workload identity).
"""

from __future__ import annotations

import pytest
from test_conformance import CONFORMANCE, NODE, run_scenario

EXPECTED = {
    "auth/metadata-default": (19, 19), "auth/metadata-var1": (19, 19), "auth/metadata-var2": (19, 19),
    "auth/metadata-var3": (19, 19), "auth/basic-cimd": (14, 14), "auth/scope-from-www-authenticate": (15, 15),
    "auth/scope-from-scopes-supported": (15, 15), "auth/scope-omitted-when-undefined": (15, 15),
    "auth/scope-step-up": (35, 35), "auth/scope-retry-limit": (28, 28), "auth/token-endpoint-auth-basic": (20, 20),
    "auth/token-endpoint-auth-post": (20, 20), "auth/token-endpoint-auth-none": (20, 20),
    "auth/pre-registration": (14, 14), "auth/resource-mismatch": (2, 2), "auth/offline-access-scope": (11, 11),
    "auth/offline-access-not-supported": (14, 14), "auth/authorization-server-migration": (28, 28),
    "auth/iss-supported": (14, 14), "auth/iss-not-advertised": (14, 14), "auth/iss-supported-missing": (8, 8),
    "auth/iss-wrong-issuer": (8, 8), "auth/iss-unexpected": (8, 8), "auth/iss-normalized": (8, 8),
    "auth/metadata-issuer-mismatch": (3, 3), "auth/dpop": (12, 12), "auth/dpop-nonce": (14, 14),
}

pytestmark = pytest.mark.skipif(not NODE.exists() or not CONFORMANCE.exists(), reason="npm devDependencies missing")


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_auth_scenario(scenario: str) -> None:
    passed, total, output = run_scenario(scenario)
    assert (passed, total) == EXPECTED[scenario], output[-3000:]
