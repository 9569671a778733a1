"""The official MCP conformance suite's auth scenarios (0.2.0-alpha.12) that a browser client should pass, for
MCP 2026-07-28 and 2025-11-25, driving our OAuth client through conformance_client.py (which plays the browser).

Pass counts: every check of each scenario below, including the DPoP extension (``auth/dpop``,
``auth/dpop-nonce``: DPoP-bound tokens, a fresh proof per request, nonces from the token endpoint and the MCP
server), the RFC 9207 ``iss`` checks and issuer-keyed credentials.

``auth/authorization-server-migration`` passes 2 of 3: its test server speaks only MCP 2026-07-28 and refuses
``initialize``, so the client never reaches the point where the authorization server changes; the two checks
that no credential of the first server reaches the second pass (the re-registration itself is covered by
test_oauth_issuers.py). It reaches 3/3 with the 2026-07-28 protocol (issue #31, item 1).

Not passed on purpose: the 2025-03-26 back-compat scenarios (see test_conformance.py) and the extension
scenarios for machine clients (client credentials, enterprise-managed authorization, workload identity).
"""

from __future__ import annotations

import pytest
from test_conformance import CONFORMANCE, NODE, run_scenario

EXPECTED = {
    "auth/metadata-default": (18, 18), "auth/metadata-var1": (18, 18), "auth/metadata-var2": (18, 18),
    "auth/metadata-var3": (18, 18), "auth/basic-cimd": (13, 13), "auth/scope-from-www-authenticate": (14, 14),
    "auth/scope-from-scopes-supported": (14, 14), "auth/scope-omitted-when-undefined": (14, 14),
    "auth/scope-step-up": (34, 34), "auth/scope-retry-limit": (28, 28), "auth/token-endpoint-auth-basic": (19, 19),
    "auth/token-endpoint-auth-post": (19, 19), "auth/token-endpoint-auth-none": (19, 19),
    "auth/pre-registration": (13, 13), "auth/resource-mismatch": (2, 2), "auth/offline-access-scope": (9, 9),
    "auth/offline-access-not-supported": (12, 12), "auth/authorization-server-migration": (2, 3),
    "auth/iss-supported": (12, 12), "auth/iss-not-advertised": (12, 12), "auth/iss-supported-missing": (8, 8),
    "auth/iss-wrong-issuer": (8, 8), "auth/iss-unexpected": (8, 8), "auth/iss-normalized": (8, 8),
    "auth/metadata-issuer-mismatch": (3, 3), "auth/dpop": (12, 12), "auth/dpop-nonce": (14, 14),
}

pytestmark = pytest.mark.skipif(not NODE.exists() or not CONFORMANCE.exists(), reason="npm devDependencies missing")


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_auth_scenario(scenario: str) -> None:
    passed, total, output = run_scenario(scenario)
    assert (passed, total) == EXPECTED[scenario], output[-3000:]
