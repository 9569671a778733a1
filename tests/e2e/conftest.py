"""Fixtures for the browser tests: the real relay serving dist/, and Debian's Chromium via Playwright."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Playwright, sync_playwright
from vendor_replay import VendorReplay

ROOT = Path(__file__).resolve().parents[2]
DIST = Path(os.environ.get("ORIZURU_DIST", ROOT / "dist"))
CHROMIUM = "/usr/bin/chromium"
# Chromium's own background traffic would otherwise try to reach Google from a closed network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
]


def start_site(log: Path, dist: Path = DIST, *args: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``python -m server`` on a free loopback port; return the process and the URL it printed."""
    if not (dist / "index.html").is_file():
        pytest.fail(f"{dist} is not built: run `python3 build.py build`")
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "server", "--dist", str(dist), "--port", "0", *args],
                                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        match = re.search(r"(http://\S+)", log.read_text())
        if match:
            return proc, match.group(1)
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    pytest.fail(f"the server did not print its URL: {log.read_text()!r}")


@pytest.fixture(scope="module")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    proc, url = start_site(tmp_path_factory.mktemp("site") / "server.log")
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def relay_serving(root: Path, *server_args: str) -> Iterator[str]:
    """The real relay serving the built site with one stdio server, capitals (journeys_mcp_server.py, given
    ``server_args``), for as long as the generator runs."""
    config = root / "servers.json"
    server = Path(__file__).with_name("journeys_mcp_server.py")
    capitals = {"command": sys.executable, "args": [str(server), *server_args]}
    config.write_text(json.dumps({"mcpServers": {"capitals": capitals}}))
    proc, url = start_site(root / "relay.log", DIST, "--config", str(config))
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def relay_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The relay with capitals speaking the handshake revisions only (an older server)."""
    yield from relay_serving(tmp_path_factory.mktemp("relay"))


@pytest.fixture(scope="module")
def modern_relay_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The relay with capitals speaking MCP 2026-07-28 only (no initialize, no sessions)."""
    yield from relay_serving(tmp_path_factory.mktemp("relay"), "modern")


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield browser
    browser.close()


@pytest.fixture(autouse=True)
def _close_what_the_test_left_open(request: pytest.FixtureRequest) -> Iterator[None]:
    """Journeys let their pages go (``open_app`` opens a context and returns its page): each kept its booted
    Pyodide, some 300 MB, until the module's browser closed, and the next test could find it in
    ``browser.contexts``. After a test that used the browser, close the contexts it opened; those of wider
    fixtures (set up before this one) stay."""
    if "browser" not in request.fixturenames:
        yield
        return
    browser: Browser = request.getfixturevalue("browser")
    before = set(browser.contexts)
    yield
    for context in browser.contexts:
        if context not in before:
            context.close()


@pytest.fixture
def profile(playwright: Playwright, tmp_path: Path) -> Iterator[BrowserContext]:
    """A browser with a real profile on disk, as a user has: incognito contexts keep only a small
    in-memory HTTP cache, too small for the 10 MB Pyodide wasm."""
    context = playwright.chromium.launch_persistent_context(tmp_path, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield context
    context.close()


@pytest.fixture
def vendor() -> Iterator[VendorReplay]:
    """A loopback vendor that replays the recordings a test scripts (vendor_replay.py)."""
    server = VendorReplay()
    yield server
    server.close()
