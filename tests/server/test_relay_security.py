"""SECURITY.md T-R1..T-R9, T-R12 and the CORS rules, against small relay apps driven by TestClient.

Each test builds its own app; none of these requests may start a process (``started`` stays 0).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from conftest import ROOT
from starlette.testclient import TestClient

from server.app import create_app
from server.config import Limits, ServerSpec
from server.security import Policy, canonical_origin
from server.sessions import Relay

TOKEN = "t" * 43
BASE = "http://127.0.0.1:8765"
APP_ORIGIN = "http://127.0.0.1:8765"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
JSON_HEADERS = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {TOKEN}"}


def make(token: str | None = TOKEN, **limits) -> tuple[TestClient, Relay]:
    relay = Relay({"demo": ServerSpec("demo", sys.executable, ("-c", "raise SystemExit(1)"))}, Limits(**limits))
    app = create_app(None, relay, Policy.for_port(8765, token, ("https://app.example",)))
    return TestClient(app, base_url=BASE), relay


def test_t_r1_foreign_origin_with_valid_token_is_refused_before_anything_runs():
    client, relay = make()
    r = client.post("/mcp/demo", json=INIT, headers=JSON_HEADERS | {"Origin": "http://evil.example"})
    assert r.status_code == 403
    assert "access-control-allow-origin" not in r.headers
    assert relay.servers["demo"].started == 0


@pytest.mark.parametrize("origin", [
    "http://127.0.0.1.evil.com", "http://127.0.0.1:8765.evil.com", "https://app.example.evil.com",
    "https://app.example:444", "http://app.example", "null", "http://127.0.0.1:8766", "http://localhost",
])
def test_t_r2_prefix_suffix_port_and_null_origins_are_refused(origin):
    client, relay = make()
    r = client.post("/mcp/demo", json=INIT, headers=JSON_HEADERS | {"Origin": origin})
    assert r.status_code == 403
    assert relay.servers["demo"].started == 0


def test_allowed_origins_are_canonicalised_and_matched_exactly():
    assert canonical_origin("HTTPS://App.Example:443/") == "https://app.example"
    policy = Policy.for_port(8765, TOKEN, ("https://app.example",))
    assert policy.origin_ok("https://app.example")
    assert policy.origin_ok("http://localhost:8765") and policy.origin_ok("http://[::1]:8765")
    with pytest.raises(ValueError):
        canonical_origin("https://app.example/path")


def test_t_r3_no_token_is_401_and_a_rebound_host_is_421():
    client, relay = make()
    assert client.post("/mcp/demo", json=INIT, headers={"Accept": JSON_HEADERS["Accept"]}).status_code == 401
    r = client.post("/mcp/demo", json=INIT, headers=JSON_HEADERS | {"Host": "rebind.attacker.example:8765"})
    assert r.status_code == 421
    assert client.get("/", headers={"Host": "rebind.attacker.example:8765"}).status_code == 421
    assert client.get("/api/servers", headers=JSON_HEADERS | {"Host": "127.0.0.1:9999"}).status_code == 421
    assert relay.servers["demo"].started == 0


@pytest.mark.parametrize("authorization", [
    None, f"Bearer {TOKEN[:-1]}", f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}u", f"Basic {TOKEN}", TOKEN, "Bearer ",
])
def test_t_r4_token_only_in_the_header_and_exactly(authorization):
    client, relay = make()
    headers = {"Accept": JSON_HEADERS["Accept"]} | ({"Authorization": authorization} if authorization else {})
    r = client.post(f"/mcp/demo?token={TOKEN}", json=INIT, headers=headers)
    assert r.status_code == 401
    assert r.headers["www-authenticate"].startswith("Bearer")
    assert client.get(f"/api/servers?token={TOKEN}", headers={"Cookie": f"token={TOKEN}"}).status_code == 401
    assert relay.servers["demo"].started == 0


def test_t_r5_the_inspector_get_vector_runs_nothing():
    client, relay = make()
    r = client.get("/sse?transportType=stdio&command=calc&args=x", headers=JSON_HEADERS)
    assert r.status_code in (404, 405)
    assert client.get("/mcp/demo?command=calc", headers=JSON_HEADERS).status_code == 400
    assert relay.servers["demo"].started == 0


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"])
def test_t_r6_simple_cors_content_types_cannot_start_a_session(content_type):
    client, relay = make()
    r = client.post("/mcp/demo", content=json.dumps(INIT), headers=JSON_HEADERS | {"Content-Type": content_type})
    assert r.status_code in (400, 415)
    assert relay.servers["demo"].started == 0


def test_t_r7_preflight_from_an_allowed_origin():
    client, _ = make()
    r = client.options("/mcp/demo", headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"})
    assert r.status_code == 204
    assert r.headers["access-control-allow-origin"] == "https://app.example"
    assert r.headers["vary"] == "Origin"
    allowed = {h.strip().lower() for h in r.headers["access-control-allow-headers"].split(",")}
    assert {"mcp-protocol-version", "mcp-session-id", "last-event-id", "authorization", "content-type"} <= allowed
    exposed = {h.strip().lower() for h in r.headers["access-control-expose-headers"].split(",")}
    assert {"mcp-session-id", "www-authenticate"} <= exposed
    assert "access-control-allow-credentials" not in r.headers


def test_t_r7_preflight_from_a_foreign_origin_gets_no_cors():
    client, _ = make()
    r = client.options("/mcp/demo", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert r.status_code == 403
    assert "access-control-allow-origin" not in r.headers


def test_allowed_origin_can_read_a_401_and_gets_exact_cors_on_answers():
    client, _ = make()
    r = client.get("/api/servers", headers={"Origin": "https://app.example"})
    assert r.status_code == 401 and r.headers["access-control-allow-origin"] == "https://app.example"
    r = client.get("/api/servers", headers={"Origin": "https://app.example", "Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "https://app.example"
    assert "mcp-session-id" in r.headers["access-control-expose-headers"].lower()


def test_t_r8_non_loopback_bind_needs_the_dangerous_flag(dist):
    r = subprocess.run([sys.executable, "-m", "server", "--dist", str(dist), "--host", "0.0.0.0", "--port", "0"],
                       cwd=ROOT, capture_output=True, timeout=30)
    assert r.returncode == 2
    assert b"refusing to bind 0.0.0.0" in r.stderr


def test_t_r9_unknown_server_names_and_browser_side_config_are_refused():
    client, relay = make()
    assert client.post("/mcp/calc", json=INIT, headers=JSON_HEADERS).status_code == 403
    assert client.get("/sse/calc", headers=JSON_HEADERS).status_code == 403
    assert client.post("/mcp/..%2F..%2Fbin%2Fsh", json=INIT, headers=JSON_HEADERS).status_code in (403, 404)
    assert client.post("/api/servers", json={"name": "x", "command": "calc"}, headers=JSON_HEADERS).status_code == 405
    assert relay.servers["demo"].started == 0


def test_t_r12_oversized_bodies_get_413_and_broken_json_400():
    client, relay = make(max_body_bytes=1024 * 1024)
    big = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"' + b"a" * (50 * 1024 * 1024) + b'"}}'
    r = client.post("/mcp/demo", content=big, headers=JSON_HEADERS | {"Content-Type": "application/json"})
    assert r.status_code == 413
    for body in (b'{"jsonrpc":"2.0","id":1,"method":"initi\nalize"', b"not json", b"[]"):
        r = client.post("/mcp/demo", content=body, headers=JSON_HEADERS | {"Content-Type": "application/json"})
        assert r.status_code == 400
    assert relay.servers["demo"].started == 0


def test_requests_without_a_session_must_be_initialize_and_versions_must_be_known():
    client, relay = make()
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert client.post("/mcp/demo", json=ping, headers=JSON_HEADERS).status_code == 400
    r = client.post("/mcp/demo", json=INIT, headers=JSON_HEADERS | {"MCP-Protocol-Version": "2099-01-01"})
    assert r.status_code == 400
    assert client.delete("/mcp/demo", headers=JSON_HEADERS | {"Mcp-Session-Id": "nope"}).status_code == 404
    assert relay.servers["demo"].started == 0


def test_session_limit_gives_503():
    client, relay = make(max_sessions=1)
    with client:  # runs the lifespan, so sessions could be admitted
        relay._sse_open = 1  # one session already open
        assert client.post("/mcp/demo", json=INIT, headers=JSON_HEADERS).status_code == 503
    assert relay.servers["demo"].started == 0


def test_api_servers_lists_configured_servers_without_env_values():
    relay = Relay({"s": ServerSpec("s", "node", ("index.js",), {"API_KEY": "secret-value"})})
    client = TestClient(create_app(None, relay, Policy.for_port(8765, TOKEN)), base_url=BASE)
    body = client.get("/api/servers", headers=JSON_HEADERS).json()
    (server,) = body["servers"]
    assert server["name"] == "s" and server["url"] == "/mcp/s" and server["state"] == "idle"
    assert server["command"] == "node" and server["args"] == ["index.js"] and server["envKeys"] == ["API_KEY"]
    assert "secret-value" not in str(body)


def test_the_site_keeps_its_headers_and_the_token_can_be_omitted_only_explicitly(dist):
    client, _ = make(token=None)
    assert client.get("/api/servers").status_code == 200
    site = TestClient(create_app(dist), base_url=BASE).get("/")
    assert site.status_code == 200 and "content-security-policy" in site.headers


def test_the_relay_sends_the_sites_own_meta_policy_plus_frame_ancestors(tmp_path):
    """T-X12: one policy, written in the page's <meta>; the header agrees and adds what a <meta> cannot."""
    index = (ROOT / "web" / "index.html").read_text()
    (tmp_path / "index.html").write_text(index)
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', index)
    assert meta, "web/index.html must carry the site's Content-Security-Policy"
    header = TestClient(create_app(tmp_path), base_url=BASE).get("/").headers["content-security-policy"]
    assert header == f"{meta[1]}; frame-ancestors 'none'"
    assert "script-src 'self' 'wasm-unsafe-eval'" in header and "object-src 'none'" in header


def test_the_mcp_app_frame_gets_its_own_policy_and_may_be_framed_by_the_site_only(tmp_path):
    """T-W8: the frame MCP App views are drawn in runs their inline scripts under its own policy, which the
    relay sends instead of the page's (two policies would both apply), and only the site may frame it."""
    (tmp_path / "index.html").write_text((ROOT / "web" / "index.html").read_text())
    frame = (ROOT / "web" / "mcp_app" / "frame.html").read_text()
    (tmp_path / "mcp-app-frame.html").write_text(frame)
    client = TestClient(create_app(tmp_path), base_url=BASE)
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', frame)
    assert meta
    header = client.get("/mcp-app-frame.html").headers["content-security-policy"]
    assert header == f"{meta[1]}; frame-ancestors 'self'"
    assert client.get("/").headers["content-security-policy"].endswith("frame-ancestors 'none'")


def test_a_site_without_a_policy_still_gets_a_same_origin_one(dist):
    header = TestClient(create_app(dist), base_url=BASE).get("/").headers["content-security-policy"]
    assert header.startswith("default-src 'self'") and header.endswith("frame-ancestors 'none'")


@pytest.mark.parametrize("name", ["Host", "Origin", "Authorization", "Remote-Authorization", "Mcp-Session-Id",
                                  "MCP-Protocol-Version", "Content-Type"])
def test_t_r21_a_judged_header_sent_twice_refuses_the_request_whole(name):
    client, relay = make()
    same = {"Host": "127.0.0.1:8765", "Origin": "https://app.example", "Authorization": f"Bearer {TOKEN}",
            "Remote-Authorization": "Bearer x", "Mcp-Session-Id": "a", "MCP-Protocol-Version": "2025-11-25",
            "Content-Type": "application/json"}
    headers = [(k, v) for k, v in (JSON_HEADERS | same).items() if k != name] + [(name, same[name])] * 2
    r = client.post("/mcp/demo", content=json.dumps(INIT), headers=headers)
    assert r.status_code == 400 and name.lower() in r.json()["error"]["message"]
    assert "access-control-allow-origin" not in r.headers
    assert relay.servers["demo"].started == 0
