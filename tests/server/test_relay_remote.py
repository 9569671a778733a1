"""The remote bridge (``--allow-remote``): only listed URLs, only public addresses, same front door, streamed.

Loopback is never a legal target, so the tests that must reach real loopback servers build the relay app
in-process with a ``CheckedBackend`` whose address check admits exactly the test server's address. That
hook is a constructor argument; the command line cannot set it (``test_cli_*`` run the real
``python -m server`` and see loopback refused). The refusal tests use the default check.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import httpx2
import pytest
import uvicorn
from conftest import FIXTURE, NODE_BIN, ROOT, mcp_client, relay, text, wait_until
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from server.app import create_app
from server.config import ServerSpec
from server.remote import (
    CheckedBackend,
    RemoteBridge,
    RemoteConfigError,
    RemoteLimits,
    RemoteTarget,
    is_public,
    parse_targets,
)
from server.security import Policy
from server.sessions import Relay

EDGE_IP = "127.0.0.2"  # the test servers' own loopback address, so "only this address" is a real restriction
TOKEN = "r" * 43
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


# ---- real servers in threads ---------------------------------------------------------------------
@contextmanager
def serve(app, host: str = "127.0.0.1") -> Iterator[int]:
    """``app`` under uvicorn on ``host`` and a free port, in a thread; yields the port."""
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    assert wait_until(lambda: server.started, timeout=15)
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=15)


class Edge:
    """A scripted remote: records what reached it, and answers in ways a relay must handle."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []
        self.landed = 0
        self.release = threading.Event()
        self.stream_closed = threading.Event()

    def app(self) -> Starlette:
        async def echo(request: Request) -> Response:
            self.seen.append(dict(request.headers) | {"_body": (await request.body()).decode()})
            return JSONResponse({"jsonrpc": "2.0", "id": 1, "result": {}},
                                headers={"Mcp-Session-Id": "remote-session", "Set-Cookie": "sid=leak; Path=/",
                                         "X-Internal": "secret"})

        async def redirect(request: Request) -> Response:
            self.seen.append(dict(request.headers))
            return RedirectResponse(f"http://{EDGE_IP}:{request.url.port}/landing", status_code=307)

        async def landing(request: Request) -> Response:
            self.landed += 1
            return JSONResponse({})

        async def events(request: Request) -> Response:
            async def body():
                try:
                    yield b"event: message\ndata: first\n\n"
                    await anyio.to_thread.run_sync(self.release.wait, 20)
                    yield b"event: message\ndata: second\n\n"
                    await anyio.sleep(30)  # stays open until the relay lets go
                finally:
                    self.stream_closed.set()
            return StreamingResponse(body(), media_type="text/event-stream")

        async def typed(request: Request) -> Response:
            # A remote answering with a page, a script or an image instead of MCP (T-R20).
            kind = request.path_params["kind"]
            body = {"html": "<script>parent.postMessage(localStorage, '*')</script>",
                    "javascript": "fetch('/api/servers')", "svg": "<svg onload='alert(1)'/>"}
            media = {"html": "text/html", "javascript": "text/javascript", "svg": "image/svg+xml"}
            return Response(body[kind], media_type=media[kind])

        async def accepted(request: Request) -> Response:
            return Response(status_code=202)

        async def login_page(request: Request) -> Response:
            return Response("<form>sign in</form>", status_code=401, media_type="text/html",
                            headers={"WWW-Authenticate": 'Bearer resource_metadata="https://a.example/prm"'})

        async def big(request: Request) -> Response:
            async def body():
                for _ in range(64):
                    yield b"x" * 1024
            return StreamingResponse(body(), media_type="application/json")

        return Starlette(routes=[
            Route("/mcp", echo, methods=["POST", "DELETE"]), Route("/redirect", redirect, methods=["POST"]),
            Route("/landing", landing, methods=["GET", "POST"]), Route("/events", events, methods=["GET"]),
            Route("/big", big, methods=["POST"]), Route("/typed/{kind}", typed, methods=["POST", "GET"]),
            Route("/accepted", accepted, methods=["POST"]), Route("/login", login_page, methods=["POST"]),
        ])


def only(*addresses: str):
    allowed = {ipaddress.ip_address(a) for a in addresses}
    return lambda address: address in allowed


@contextmanager
def relay_app(targets: dict[str, RemoteTarget], backend, limits: RemoteLimits | None = None,
              token: str | None = TOKEN, bridge: type[RemoteBridge] = RemoteBridge) -> Iterator[str]:
    """The relay app in-process (so a test backend can be handed in), served on 127.0.0.1; yields its base URL.
    ``bridge`` is the kind of forwarder (remote MCP, or WebDAV: test_relay_webdav.py)."""
    forwarder = bridge(targets, limits, backend=backend)
    port_holder = socket.socket()
    port_holder.bind(("127.0.0.1", 0))
    port = port_holder.getsockname()[1]
    port_holder.close()
    relay_ = Relay({"demo": ServerSpec("demo", sys.executable, ("-c", "raise SystemExit(1)"))})
    app = create_app(None, relay_, Policy.for_port(port, token), **{forwarder.kind: forwarder})
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    assert wait_until(lambda: server.started, timeout=15)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)


@pytest.fixture(scope="module")
def edge() -> Iterator[tuple[Edge, int]]:
    scripted = Edge()
    with serve(scripted.app(), EDGE_IP) as port:
        yield scripted, port


def edge_targets(port: int, **paths: str) -> dict[str, RemoteTarget]:
    return parse_targets([f"{name}=http://{EDGE_IP}:{port}{path}" for name, path in paths.items()],
                         address_ok=only(EDGE_IP))


AUTH = {"Authorization": f"Bearer {TOKEN}"}
POST_HEADERS = AUTH | {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


# ---- the address check -----------------------------------------------------------------------------
@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.1.2.3", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
    "224.0.0.1", "255.255.255.255", "198.18.0.1", "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1",
    "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "2002:7f00:1::", "2002:a00:1::",
    "64:ff9b::a00:1", "2001:0:4136:e378:8000:63bf:80ff:fffe", "2001:db8::1", "ff02::1",
])
def test_special_addresses_are_never_public(address):
    assert not is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2002:808:808::"])
def test_public_addresses_pass(address):
    assert is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:8080/mcp", "http://10.0.0.1/mcp", "http://169.254.169.254/latest/meta-data/", "http://[::1]/",
    "http://[::ffff:127.0.0.1]/mcp", "http://[fe80::1]/", "http://0.0.0.0:6379/",
])
def test_allowlisting_a_special_address_literal_fails_at_startup(url):
    with pytest.raises(RemoteConfigError, match="not a public address"):
        parse_targets([url])


@pytest.mark.parametrize("url", ["ftp://example.com/mcp", "https://user:pw@example.com/mcp", "https://example.com/#x",
                                 "example.com/mcp", "https://example.com:99999/"])
def test_allowlist_entries_must_be_plain_http_urls(url):
    with pytest.raises(RemoteConfigError):
        parse_targets([url])


def test_names_default_to_the_host_and_urls_are_kept_exactly():
    targets = parse_targets(["https://MCP.Example.com:443/v1/mcp?tenant=a", "https://mcp.example.com/other",
                             "work=https://w.example.org:8443/mcp"])
    assert {n: t.url for n, t in targets.items()} == {
        "mcp.example.com": "https://mcp.example.com/v1/mcp?tenant=a",
        "mcp.example.com-2": "https://mcp.example.com/other",
        "work": "https://w.example.org:8443/mcp",
    }
    with pytest.raises(RemoteConfigError, match="used twice"):
        parse_targets(["a=https://x.example/", "a=https://y.example/"])


async def test_a_name_resolving_to_any_private_address_is_refused_before_connecting():
    calls: list[tuple[str, int]] = []

    async def resolver(host: str, port: int):
        calls.append((host, port))
        return [ipaddress.ip_address("1.1.1.1"), ipaddress.ip_address("10.0.0.7")]

    targets = parse_targets(["mixed=https://mixed.example/mcp"])
    with relay_app(targets, CheckedBackend(resolver=resolver)) as base:
        r = httpx2.post(f"{base}/remote/mixed", json=INIT, headers=POST_HEADERS)
    assert r.status_code == 403
    assert "mixed.example resolves to 10.0.0.7, which is not a public address" in r.json()["error"]["message"]
    assert calls == [("mixed.example", 443)]


async def test_dns_rebinding_between_check_and_connect_cannot_redirect_the_connection(edge):
    """The resolver answers the edge's address once, then a different one: the relay must use the checked one."""
    scripted, port = edge
    answers = [EDGE_IP]

    async def resolver(host: str, port_: int):
        return [ipaddress.ip_address(answers.pop(0) if answers else "127.0.0.3")]

    targets = parse_targets([f"rebind=http://rebind.example:{port}/mcp"])
    with relay_app(targets, CheckedBackend(address_ok=only(EDGE_IP), resolver=resolver)) as base:
        r = httpx2.post(f"{base}/remote/rebind", json=INIT, headers=POST_HEADERS)
    assert r.status_code == 200, r.text
    assert scripted.seen[-1]["host"] == f"rebind.example:{port}"  # the name, not the address, is the Host


# ---- what crosses the bridge -----------------------------------------------------------------------
def test_only_mcp_headers_cross_and_the_relay_token_never_does(edge):
    scripted, port = edge
    with relay_app(edge_targets(port, e="/mcp"), CheckedBackend(address_ok=only(EDGE_IP))) as base:
        r = httpx2.post(f"{base}/remote/e", json=INIT, headers=POST_HEADERS | {
            "Origin": base, "Cookie": "relay=1", "Remote-Authorization": "Bearer remote-credential",
            "Mcp-Session-Id": "abc", "MCP-Protocol-Version": "2025-11-25", "X-Custom": "no"})
    assert r.status_code == 200
    assert r.json()["result"] == {}
    seen = scripted.seen[-1]
    assert seen["authorization"] == "Bearer remote-credential"
    assert TOKEN not in json.dumps(seen)
    assert not {"cookie", "origin", "x-custom", "remote-authorization"} & set(seen)
    assert seen["mcp-session-id"] == "abc" and seen["mcp-protocol-version"] == "2025-11-25"
    assert json.loads(seen["_body"]) == INIT
    assert r.headers["mcp-session-id"] == "remote-session"
    assert r.headers["access-control-allow-origin"] == base
    assert "set-cookie" not in r.headers and "x-internal" not in r.headers


@pytest.mark.parametrize("kind", ["html", "javascript", "svg"])
def test_a_remote_answering_a_page_or_script_is_refused_not_served_under_the_relays_origin(edge, kind):
    """T-R20: only MCP's content types cross; anything else would run as the app's own origin."""
    _, port = edge
    with relay_app(edge_targets(port, t=f"/typed/{kind}"), CheckedBackend(address_ok=only(EDGE_IP))) as base:
        post = httpx2.post(f"{base}/remote/t", json=INIT, headers=POST_HEADERS)
        get = httpx2.get(f"{base}/remote/t", headers=AUTH | {"Accept": "text/event-stream"})
    for r in (post, get):
        assert r.status_code == 502
        assert r.headers["content-type"] == "application/json"
        assert "not an MCP content type" in r.json()["error"]["message"]
        assert "<script" not in r.text and "onload" not in r.text


def test_an_error_page_keeps_its_status_and_auth_challenge_but_not_its_body(edge):
    """A 401 sent as HTML still starts OAuth in the page (WWW-Authenticate), but its HTML never crosses."""
    _, port = edge
    with relay_app(edge_targets(port, l="/login"), CheckedBackend(address_ok=only(EDGE_IP))) as base:
        r = httpx2.post(f"{base}/remote/l", json=INIT, headers=POST_HEADERS)
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == 'Bearer resource_metadata="https://a.example/prm"'
    assert r.headers["content-type"] == "application/json" and "<form" not in r.text
    assert "HTTP 401" in r.json()["error"]["message"]
    assert r.headers["x-content-type-options"] == "nosniff"


def test_forwarded_responses_are_sandboxed_and_never_sniffed(edge):
    """T-R20: even an MCP response carries nosniff and a sandboxing CSP."""
    _, port = edge
    with relay_app(edge_targets(port, e="/mcp", a="/accepted"), CheckedBackend(address_ok=only(EDGE_IP))) as base:
        json_reply = httpx2.post(f"{base}/remote/e", json=INIT, headers=POST_HEADERS)
        empty_reply = httpx2.post(f"{base}/remote/a", json=INIT, headers=POST_HEADERS)
    assert json_reply.status_code == 200 and empty_reply.status_code == 202
    for r in (json_reply, empty_reply):
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["content-security-policy"] == "sandbox"


def test_front_door_token_origin_host_and_unlisted_names(edge):
    scripted, port = edge
    before = len(scripted.seen)
    with relay_app(edge_targets(port, e="/mcp"), CheckedBackend(address_ok=only(EDGE_IP))) as base:
        no_token = httpx2.post(f"{base}/remote/e", json=INIT, headers={"Accept": "application/json"})
        foreign = httpx2.post(f"{base}/remote/e", json=INIT, headers=POST_HEADERS | {"Origin": "http://evil.example"})
        rebound = httpx2.post(f"{base}/remote/e", json=INIT, headers=POST_HEADERS | {"Host": "evil.example"})
        unlisted = httpx2.post(f"{base}/remote/other", json=INIT, headers=POST_HEADERS)
        path_escape = httpx2.post(f"{base}/remote/e/../../landing", json=INIT, headers=POST_HEADERS)
        plain = httpx2.post(f"{base}/remote/e", content=b"{}", headers=AUTH | {"Content-Type": "text/plain"})
        preflight = httpx2.options(f"{base}/remote/e", headers={
            "Origin": base, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "remote-authorization, content-type"})
    assert no_token.status_code == 401
    assert foreign.status_code == 403
    assert rebound.status_code == 421
    assert unlisted.status_code == 403 and "no --allow-remote URL" in unlisted.json()["error"]["message"]
    assert path_escape.status_code in (403, 404)
    assert plain.status_code == 415
    assert preflight.status_code == 204
    assert "Remote-Authorization" in preflight.headers["access-control-allow-headers"]
    assert len(scripted.seen) == before and scripted.landed == 0  # none of them reached the remote


def test_redirects_are_not_followed(edge):
    scripted, port = edge
    with relay_app(edge_targets(port, r="/redirect"), CheckedBackend(address_ok=only(EDGE_IP))) as base:
        r = httpx2.post(f"{base}/remote/r", json=INIT, headers=POST_HEADERS)
    assert r.status_code == 502
    assert "redirects to" in r.json()["error"]["message"] and "location" not in r.headers
    assert scripted.landed == 0


def test_request_bodies_over_the_limit_get_413_and_never_leave(edge):
    scripted, port = edge
    before = len(scripted.seen)
    with relay_app(edge_targets(port, e="/mcp"), CheckedBackend(address_ok=only(EDGE_IP)),
                   RemoteLimits(max_body_bytes=1000)) as base:
        r = httpx2.post(f"{base}/remote/e", content=b"[" + b" " * 5000 + b"]", headers=POST_HEADERS)
    assert r.status_code == 413
    assert len(scripted.seen) == before


def test_responses_over_the_limit_are_cut_not_delivered_whole(edge):
    _, port = edge
    with relay_app(edge_targets(port, b="/big"), CheckedBackend(address_ok=only(EDGE_IP)),
                   RemoteLimits(max_response_bytes=10_000)) as base:
        received = bytearray()
        with pytest.raises(httpx2.RemoteProtocolError):
            with httpx2.stream("POST", f"{base}/remote/b", json=INIT, headers=POST_HEADERS) as r:
                assert r.status_code == 200
                for chunk in r.iter_raw():
                    received += chunk
    assert len(received) <= 10_000


def test_event_streams_flow_through_as_they_are_written_and_end_with_the_browser(edge):
    scripted, port = edge
    scripted.release.clear()
    scripted.stream_closed.clear()
    with relay_app(edge_targets(port, s="/events"), CheckedBackend(address_ok=only(EDGE_IP))) as base:
        with httpx2.stream("GET", f"{base}/remote/s", headers=AUTH | {"Accept": "text/event-stream"},
                           timeout=20) as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            lines = r.iter_lines()
            # The first event arrives while the remote is still holding back the second: nothing is buffered.
            assert next(lines) == "event: message" and next(lines) == "data: first"
            assert not scripted.release.is_set()
            scripted.release.set()
            assert [next(lines) for _ in range(3)] == ["", "event: message", "data: second"]
        # The browser hung up: the relay must let go of the remote's stream too.
        assert scripted.stream_closed.wait(10)


def test_unreachable_remote_is_a_clear_502():
    with socket.socket() as s:
        s.bind((EDGE_IP, 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    targets = parse_targets([f"gone=http://{EDGE_IP}:{port}/mcp"], address_ok=only(EDGE_IP))
    with relay_app(targets, CheckedBackend(address_ok=only(EDGE_IP))) as base:
        r = httpx2.post(f"{base}/remote/gone", json=INIT, headers=POST_HEADERS)
    assert r.status_code == 502 and "cannot reach" in r.json()["error"]["message"]


# ---- a real MCP server behind the bridge -----------------------------------------------------------
@pytest.fixture(scope="module")
def fixture_http() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(FIXTURE), "--http", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def listening() -> bool:
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", port)) == 0
        assert wait_until(listening, timeout=20)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=15)


async def test_official_sdk_client_through_the_remote_bridge(fixture_http):
    targets = parse_targets([f"fixture=http://127.0.0.1:{fixture_http}/mcp"], address_ok=only("127.0.0.1"))
    with relay_app(targets, CheckedBackend(address_ok=only("127.0.0.1"))) as base:
        servers = httpx2.get(f"{base}/api/servers", headers=AUTH).json()["servers"]
        assert {"kind": "remote", "name": "fixture", "url": "/remote/fixture",
                "target": f"http://127.0.0.1:{fixture_http}/mcp", "state": "ready"} in servers
        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)

        async with mcp_client(f"{base}/remote/fixture", TOKEN) as client:
            assert "echo" in {t.name for t in (await client.list_tools()).tools}
            assert text(await client.call_tool("echo", {"message": "über the bridge"})) == "Echo: über the bridge"
            await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
    assert progress == [0, 50, 100]


def test_conformance_server_scenarios_through_the_remote_bridge(fixture_http):
    """The fixture passes all 30 over its own HTTP; through /remote it must still (DNS rebinding included)."""
    conformance = NODE_BIN / "conformance"
    if not conformance.exists():
        pytest.fail(f"needs `npm ci` ({conformance})")
    targets = parse_targets([f"fixture=http://127.0.0.1:{fixture_http}/mcp"], address_ok=only("127.0.0.1"))
    with relay_app(targets, CheckedBackend(address_ok=only("127.0.0.1")), token=None) as base:
        run = subprocess.run([str(conformance), "server", "--url", f"{base}/remote/fixture"], cwd=ROOT,
                             env={"PATH": f"{NODE_BIN}:/usr/bin:/bin"}, capture_output=True, text=True, timeout=300)
    from test_relay_conformance import EXPECTED_SCENARIOS, SCENARIO
    results = {name: (int(ok), int(bad)) for name, ok, bad in SCENARIO.findall(run.stdout)}
    assert not {n: c for n, c in results.items() if c[1]}, run.stdout[-4000:]
    assert len(results) == EXPECTED_SCENARIOS, run.stdout[-4000:]


# ---- the command line ------------------------------------------------------------------------------
def test_cli_refuses_a_loopback_or_private_literal(dist, tmp_path):
    for url in ("http://127.0.0.1:9/mcp", "http://[::ffff:10.0.0.1]/mcp"):
        run = subprocess.run([sys.executable, "-m", "server", "--dist", str(dist), "--port", "0",
                              "--allow-remote", url], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert run.returncode == 2
        assert "not a public address" in run.stderr and "Orizuru is running" not in run.stdout


async def test_cli_relay_refuses_names_that_resolve_to_loopback(dist, tmp_path):
    """``localhost`` and ``0x7f.1`` pass the startup check (they are names), and are refused on connect."""
    with relay(dist, tmp_path, None, "--allow-remote", "lh=http://localhost:9/mcp",
               "--allow-remote", "hex=http://0x7f.1:9/mcp") as r:
        listed = {s["name"]: s for s in httpx2.get(r.base + "/api/servers", headers=r.auth).json()["servers"]}
        assert listed["lh"]["kind"] == "remote" and listed["lh"]["target"] == "http://localhost:9/mcp"
        for name in ("lh", "hex"):
            answer = httpx2.post(f"{r.base}/remote/{name}", json=INIT, headers=r.auth | {"Accept": "application/json"})
            assert answer.status_code == 403
            assert "which is not a public address" in answer.json()["error"]["message"]
        log = r.log
    time.sleep(0.1)
    assert r.token not in log.read_text()
