"""Sync of a large history: 2,000 conversations (10 messages each) up to a WebDAV folder, and down to a second
browser, in headless Chromium against a real WebDAV server (WsgiDAV on loopback, as the sync journeys use).

    .venv/bin/python bench/sync/run.py [--conversations 2000] [--dist DIR]   (after `python3 build.py build`)

Device A's database is filled through IndexedDB (bench/history's filler), then sync is turned on in Settings;
measured: ``upload`` (the click to "Synced"), with the files and bytes the folder then holds; then device B, a
fresh profile, turns sync on with the same passphrase: ``download`` (the click to "Synced", every conversation in
its list). The progress bar is sampled while it runs (how often it moved).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "bench"))
from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from history.run import FILL  # noqa: E402
from journeys_webdav_server import PASSWORD, USER, serve_webdav  # noqa: E402
from served import serve  # noqa: E402

PASSPHRASE = "bench passphrase for sync"
TIMEOUT_MS = 60 * 60_000


def turn_on(page: Page, url: str) -> tuple[float, int]:
    page.get_by_role("button", name="Settings", exact=True).click()
    dialog = page.get_by_role("dialog", name="Settings")
    dialog.get_by_label("WebDAV folder URL").fill(url)
    dialog.get_by_label("User name").fill(USER)
    dialog.get_by_label("Password (an app password where the server offers one)").fill(PASSWORD)
    dialog.get_by_label("Sync passphrase").fill(PASSPHRASE)
    started = time.monotonic()
    dialog.get_by_role("button", name="Turn on sync").click()
    moves = 0
    last = None
    status = page.locator("#sync-status")
    while "Synced at" not in (text := status.inner_text()):
        if "stopped" in text or "Could not" in text:
            raise SystemExit(f"sync failed: {text}")
        value = page.evaluate("() => document.querySelector('#sync-settings progress')?.value ?? null")
        if value != last:
            moves, last = moves + 1, value
        page.wait_for_timeout(200)
    return time.monotonic() - started, moves


def device(pw, site: str) -> tuple[object, Page]:
    profile = tempfile.mkdtemp()
    context = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                                    viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(site)
    expect(page.locator("html")).to_have_attribute("data-ui", "ready", timeout=120_000)
    return context, page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    args = parser.parse_args()
    relay, site = serve(args.dist)
    try:
        with serve_webdav(Path(tempfile.mkdtemp())) as dav, sync_playwright() as pw:
            context_a, a = device(pw, site)
            a.evaluate(FILL, {"conversations": args.conversations, "messages": 10})
            a.reload()
            expect(a.locator("html")).to_have_attribute("data-ui", "ready", timeout=120_000)
            upload, moves_up = turn_on(a, dav.url)
            files = dav.files()
            print(f"upload: {args.conversations + 1} conversations, {len(files)} files, "
                  f"{sum(map(len, files.values())) / 1e6:.1f} MB in {upload:.1f} s (progress moved {moves_up} times)")
            context_b, b = device(pw, site)
            download, moves_down = turn_on(b, dav.url)
            listed = b.locator("#conversations li").count()
            print(f"download: {download:.1f} s to a second browser (progress moved {moves_down} times), "
                  f"{listed} conversations listed")
            context_a.close()
            context_b.close()
    finally:
        relay.terminate()


if __name__ == "__main__":
    main()
