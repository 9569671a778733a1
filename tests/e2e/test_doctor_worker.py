"""The CORS doctor end to end in the real worker: the built site, served by the real relay under its real CSP,
boots Pyodide in its Web Worker, and ``mcp.doctor`` runs there in browser mode, over ``fetch`` (the ``no-cors``
reachability request, then the probes through pycore/http/fetch.py) against loopback servers on another origin,
each with one misconfiguration.

Two ways in, both through the worker's real message handler:

- as a user: the Tools dialog adds a server by URL; the connection fails and the app asks the doctor, whose
  findings (what is wrong, how to fix it) appear under the server;
- as the page's WorkerClient would call it: a ``{type: "call", method: "mcp.doctor"}`` message handed to the
  worker's own ``message`` listener (the WorkerClient is not reachable from outside the page's module), to read
  the finding codes exactly and to ask about a well-configured server, for which the app never runs the doctor.
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from conftest import DIST, start_site
from journeys import REPLY_TIMEOUT_MS, open_app, wait_ui
from playwright.sync_api import Browser, Page, Worker, expect

sys.path.append(str(Path(__file__).resolve().parents[1] / "pycore" / "mcp"))

from cors_apps import ALL_HEADERS, GOOD, serve_app  # noqa: E402
from mcp_servers import free_port  # noqa: E402
from scripted_server import Script, create_app  # noqa: E402
from starlette.middleware.cors import CORSMiddleware  # noqa: E402

pytestmark = pytest.mark.e2e

# One call into the worker, as WorkerClient.call sends it; the reply the worker posts for this id is taken
# out of the way of the page (which would ignore an id it did not choose) and returned.
CALL_IN_WORKER = """async ([method, params]) => {
  const id = `doctor-test-${Date.now()}-${Math.random()}`;
  const original = self.postMessage;
  try {
    return await new Promise((resolve) => {
      setTimeout(() => resolve({type: "still running after 120 s"}), 120000);
      self.postMessage = (message, ...rest) => {
        if (message?.id === id && (message.type === "result" || message.type === "error")) resolve(message);
        else original.call(self, message, ...rest);
      };
      self.dispatchEvent(new MessageEvent("message", {data: {type: "call", id, method, params}}));
    });
  } finally {
    self.postMessage = original;
  }
}"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    proc, url = start_site(tmp_path_factory.mktemp("doctor-site") / "server.log", DIST)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class Servers:
    """One loopback MCP server (the scripted one) per misconfiguration, each recording what reached it."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.scripts: dict[str, Script] = {}
        self.urls: dict[str, str] = {}

    def cors(self, **overrides: Any) -> dict[str, Any]:
        return {**GOOD, "allow_origins": [self.origin], **overrides}


@pytest.fixture(scope="module")
def servers(site: str) -> Iterator[Servers]:
    import contextlib

    found = Servers(origin_of(site))
    configs: dict[str, dict[str, Any] | None] = {
        "no_cors": None,
        "session_hidden": found.cors(expose_headers=["WWW-Authenticate"]),
        "version_refused": found.cors(allow_headers=[h for h in ALL_HEADERS if h != "MCP-Protocol-Version"]),
        "auth_refused": found.cors(allow_headers=[h for h in ALL_HEADERS if h != "Authorization"]),
        "good": found.cors(),
    }
    with contextlib.ExitStack() as stack:
        for name, cors in configs.items():
            script = Script()
            app = create_app(script)
            base = stack.enter_context(serve_app(app if cors is None else CORSMiddleware(app, **cors)))
            found.scripts[name], found.urls[name] = script, base + "/mcp"
        found.urls["unreachable"] = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens there
        yield found


@pytest.fixture(scope="module")
def silent_url() -> Iterator[str]:
    """A port that accepts connections and reads requests but never answers (a wedged server)."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    stop.set()
    thread.join(5)
    for conn in accepted:
        conn.close()
    listener.close()


@pytest.fixture(scope="module")
def app_page(browser: Browser, site: str) -> Iterator[Page]:
    page = open_app(browser, site)
    wait_ui(page)  # a first run: the setup card shows in the chat, nothing to close
    yield page
    page.context.close()


def pycore_worker(page: Page) -> Worker:
    workers = [w for w in page.workers if "worker" in w.url.rsplit("/", 1)[-1]]
    assert len(workers) == 1, [w.url for w in page.workers]
    return workers[0]


def doctor_in_worker(page: Page, url: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    params = {"url": url, "origin": origin_of(page.url), "headers": headers or {}}
    reply = pycore_worker(page).evaluate(CALL_IN_WORKER, ["mcp.doctor", params])
    assert reply["type"] == "result", reply
    result: dict[str, Any] = reply["result"]
    assert result["mode"] == "browser"  # Pyodide chose the fetch-based inference by itself
    return result


def codes(result: dict[str, Any]) -> list[str]:
    return [finding["code"] for finding in result["findings"]]


# -- through the worker, finding codes -------------------------------------------------------------------


def test_no_cors_at_all(app_page: Page, servers: Servers):
    result = doctor_in_worker(app_page, servers.urls["no_cors"])
    assert codes(result) == ["no_allow_origin"]
    # The worker's no-cors request got an (opaque) answer, so the doctor knows the server is there.
    assert f"{servers.urls['no_cors']} answers, but without Access-Control-Allow-Origin" in \
        result["findings"][0]["message"]
    assert "CORSMiddleware" in result["findings"][0]["fix"] and "/remote/" in result["relay_hint"]
    # What reached the server: the worker's one no-cors GET, then the CORS probes from the page's origin;
    # no POST got past its preflight.
    seen = servers.scripts["no_cors"].requests
    modes = [r["headers"].get("sec-fetch-mode") for r in seen]
    assert modes[0] == "no-cors" and modes.count("no-cors") == 1 and "cors" in modes
    assert all(r["headers"].get("origin") == servers.origin for r in seen if r["headers"]["sec-fetch-mode"] == "cors")
    assert [r["method"] for r in seen if r["method"] != "GET"] == []


def test_session_id_not_exposed(app_page: Page, servers: Servers):
    result = doctor_in_worker(app_page, servers.urls["session_hidden"])
    assert codes(result) == ["session_id_not_exposed"]
    assert "Mcp-Session-Id to Access-Control-Expose-Headers" in result["findings"][0]["fix"]
    # It got that far: the initialize probe reached the server and was answered.
    assert any(r["body"] and r["body"].get("method") == "initialize"
               for r in servers.scripts["session_hidden"].requests)


def test_protocol_version_header_not_allowed(app_page: Page, servers: Servers):
    result = doctor_in_worker(app_page, servers.urls["version_refused"], {"Authorization": "Bearer x"})
    assert codes(result) == ["header_not_allowed"]
    assert "MCP-Protocol-Version" in result["findings"][0]["message"]
    assert "add MCP-Protocol-Version to Access-Control-Allow-Headers" in result["findings"][0]["fix"]
    # The browser refused that probe at its preflight: the server never saw the header on a real request.
    assert not any("mcp-protocol-version" in r["headers"] for r in servers.scripts["version_refused"].requests
                   if r["method"] == "POST")


def test_unreachable_port(app_page: Page, servers: Servers):
    result = doctor_in_worker(app_page, servers.urls["unreachable"])
    assert codes(result) == ["unreachable"]
    assert "cannot be reached at all" in result["findings"][0]["message"]


def test_well_configured_server_has_no_finding(app_page: Page, servers: Servers):
    token = "the-users-real-token"
    result = doctor_in_worker(app_page, servers.urls["good"], {"Authorization": f"Bearer {token}"})
    assert result["findings"] == []
    seen = servers.scripts["good"].requests
    methods = [r["body"].get("method") for r in seen if r["body"]]
    assert "initialize" in methods and "ping" in methods  # the probes did run, and got through
    # The doctor probes with the header's name only: the user's token never went to the server it examines.
    assert any(r["headers"].get("authorization") == "Bearer orizuru-doctor-probe" for r in seen)
    assert all(token not in str(r["headers"]) for r in seen)


def test_a_server_that_never_answers_is_reported_not_waited_on(app_page: Page, silent_url: str):
    """It accepts the connection and says nothing: every probe would wait; the doctor stops at its timeout."""
    result = doctor_in_worker(app_page, silent_url)
    assert codes(result) == ["unreachable"]


def test_doctor_errors_name_the_problem(app_page: Page):
    reply = pycore_worker(app_page).evaluate(CALL_IN_WORKER, ["mcp.doctor", {"url": "ftp://x", "origin": "x"}])
    assert reply["type"] == "error" and "http(s) url" in reply["error"]["message"]


# -- as a user: a failed connection in the Tools dialog shows the doctor's findings -----------------------

USER_SEES = {
    "no_cors": ["answers, but without Access-Control-Allow-Origin", "send Access-Control-Allow-Origin"],
    "session_hidden": ["cannot read its Mcp-Session-Id", "add Mcp-Session-Id to Access-Control-Expose-Headers"],
    "version_refused": ["does not allow the request header MCP-Protocol-Version",
                        "add MCP-Protocol-Version to Access-Control-Allow-Headers"],
    "unreachable": ["cannot be reached at all", "Check the URL and that the server is running"],
}


def add_server(page: Page, url: str, headers: str = "") -> Any:
    page.get_by_role("button", name="Tools", exact=True).click()
    dialog = page.get_by_role("dialog", name="Tools")
    dialog.get_by_label("Server URL").fill(url)
    dialog.get_by_label("Headers").fill(headers)
    dialog.get_by_role("button", name="Add server").click()
    return dialog.locator(f'#mcp-servers li.server[data-id="url:{url}"]')


@pytest.mark.parametrize("case", list(USER_SEES))
def test_a_failed_connection_shows_the_findings(app_page: Page, servers: Servers, case: str):
    item = add_server(app_page, servers.urls[case])
    expect(item).to_have_attribute("data-status", "error", timeout=REPLY_TIMEOUT_MS)
    doctor = item.locator(".doctor")
    expect(doctor).to_be_visible(timeout=REPLY_TIMEOUT_MS)
    expect(doctor.locator("li")).to_have_count(1)
    for text in USER_SEES[case]:
        expect(doctor.locator("li")).to_contain_text(text)
    expect(doctor.locator(".hint")).to_contain_text("relay")
    app_page.get_by_role("dialog", name="Tools").get_by_role("button", name="Close").click()


def test_a_good_server_connects_and_shows_no_doctor(app_page: Page, servers: Servers):
    item = add_server(app_page, servers.urls["good"])
    expect(item).to_have_attribute("data-status", "connected", timeout=REPLY_TIMEOUT_MS)
    expect(item.locator(".doctor")).to_have_count(0)
    app_page.get_by_role("dialog", name="Tools").get_by_role("button", name="Close").click()


def test_a_header_the_user_typed_is_checked_and_never_sent(app_page: Page, servers: Servers):
    """The user's own Authorization header is one the server does not allow: the app hands the doctor the
    headers typed with the URL, it names the refused one, and the token reaches neither the server (the browser
    stopped at the preflight) nor the findings."""
    token = "user-token-for-the-doctor-test"
    item = add_server(app_page, servers.urls["auth_refused"], f"Authorization: Bearer {token}")
    expect(item).to_have_attribute("data-status", "error", timeout=REPLY_TIMEOUT_MS)
    doctor = item.locator(".doctor")
    expect(doctor.locator("li")).to_have_count(1, timeout=REPLY_TIMEOUT_MS)
    expect(doctor.locator("li")).to_contain_text("does not allow the request header Authorization")
    expect(doctor).not_to_contain_text(token)
    seen = servers.scripts["auth_refused"].requests
    assert seen and all(token not in str(r["headers"]) for r in seen)
    app_page.get_by_role("dialog", name="Tools").get_by_role("button", name="Close").click()
