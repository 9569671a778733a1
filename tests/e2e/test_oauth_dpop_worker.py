"""DPoP in the real worker (SECURITY.md T-A12): the built site's Pyodide worker signs in to a stand-in
authorization server that issues DPoP-bound tokens only and checks each proof (tests/pycore/mcp/test_oauth_dpop.py)
— through the worker's own wire methods, with the popup's redirect handed back by hand. Its proofs are signed by
WebCrypto: the token is bound to the key the worker keeps in IndexedDB, whose private half no script can export,
and the server's nonce is taken with one retry."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from journeys import open_app
from playwright.sync_api import Browser, Worker
from starlette.middleware.cors import CORSMiddleware
from test_doctor_worker import CALL_IN_WORKER, pycore_worker

sys.path.append(str(Path(__file__).resolve().parents[1] / "pycore" / "mcp"))

from cors_apps import serve_app  # noqa: E402
from test_oauth_dpop import DPoPDeployment, thumbprint  # noqa: E402

pytestmark = pytest.mark.e2e

# The worker's DPoP key for a server, as IndexedDB keeps it (web/oauth_vault.js): can script read its private half?
STORED_KEY = """async (name) => {
  const db = await new Promise((ok, fail) => {
    const req = indexedDB.open("orizuru-oauth");
    req.onsuccess = () => ok(req.result);
    req.onerror = () => fail(req.error);
  });
  const pair = await new Promise((ok, fail) => {
    const req = db.transaction("keys").objectStore("keys").get(`dpop ${name}`);
    req.onsuccess = () => ok(req.result);
    req.onerror = () => fail(req.error);
  });
  const exported = await crypto.subtle.exportKey("jwk", pair.privateKey).then(() => "exported", (e) => e.name);
  const jwk = await crypto.subtle.exportKey("jwk", pair.publicKey);
  return {extractable: pair.privateKey.extractable, exported, jwk};
}"""


def call(worker: Worker, method: str, params: dict[str, Any]) -> Any:
    reply = worker.evaluate(CALL_IN_WORKER, [method, params])
    assert reply["type"] == "result", reply
    return reply["result"]


def test_the_worker_binds_its_token_to_a_key_no_script_can_read(browser: Browser, site_url: str) -> None:
    deployment = DPoPDeployment(nonces=True)
    app = CORSMiddleware(deployment.app(), allow_origins=["*"], allow_methods=["*"], allow_headers=["*"],
                         expose_headers=["DPoP-Nonce", "WWW-Authenticate"])
    page = open_app(browser, site_url)
    try:
        worker = pycore_worker(page)
        parts = urlsplit(site_url)
        redirect = f"{parts.scheme}://{parts.netloc}{parts.path or '/'}"  # the page's own URL, as signIn gives it
        with serve_app(app) as base:
            begun = call(worker, "mcp.oauth_begin", {"server_url": base + "/mcp", "redirect_uri": redirect})
            call(worker, "mcp.oauth_finish", {"callback_url": f"{redirect}?state={begun['state']}&code=c"})
        stored = worker.evaluate(STORED_KEY, base + "/mcp")
    finally:
        page.context.close()
    # begin asks the server for its challenge without a token first; nothing else was refused
    assert set(deployment.refusals) <= {"mcp: no token"} and deployment.challenges["token"] == 1  # one nonce retry
    assert (stored["extractable"], stored["exported"]) == (False, "InvalidAccessError")
    assert list(deployment.bound.values()) == [thumbprint(stored["jwk"])]  # the token is bound to that key
