"""A second visit boots the core from a memory snapshot the first visit made (issue 36 item 1, web/snapshot.js):
the interpreter's memory after `import pycore.wire`, kept in the origin's Cache Storage, keyed by the exact files,
taken before the first call. One that cannot be restored, or was made of other files, is thrown away."""

from __future__ import annotations

import time

import pytest
from core_snapshot import CACHE, kept
from journeys import configure, last_reply, open_app, send, wait_core, wait_idle
from playwright.sync_api import Browser, Page, expect
from vendor_replay import VendorReplay, expected

pytestmark = pytest.mark.e2e


def wait_snapshot_kept(page: Page) -> str:
    """The first visit keeps its snapshot once the core is ready, in the background: its URL."""
    deadline = time.monotonic() + 60
    while not (urls := kept(page)):
        assert time.monotonic() < deadline, "no core snapshot was kept"
        page.wait_for_timeout(200)
    assert len(urls) == 1, urls
    return urls[0]


def booted(page: Page) -> str | None:
    return page.locator("html").get_attribute("data-core-boot")


def test_a_second_visit_boots_from_the_snapshot_and_the_core_works(browser: Browser, site_url: str,
                                                                    vendor: VendorReplay):
    recording, key = "openai/chat-stream-text-usage", "sk-snapshot-secret-7f3a"
    page = open_app(browser, site_url, first_visit=True)
    assert booted(page) == "fresh"
    configure(page, vendor="openai", base=vendor.url, key=key, model="gpt-4o-mini")
    vendor.script(recording)
    send(page, "a turn before the snapshot is kept")
    wait_idle(page)
    url = wait_snapshot_kept(page)
    page.reload()
    wait_core(page)
    assert booted(page) == "snapshot"
    expect(page.get_by_role("status")).to_contain_text("Python 3.14")
    # The restored core streams a reply (pydantic-core, the adapters and their imports after the restore). The key
    # was kept in memory only: given again.
    configure(page, vendor="openai", base=vendor.url, key=key, model="gpt-4o-mini")
    vendor.script(recording)
    send(page, "and one from the restored core")
    expect(last_reply(page).locator(".content")).to_have_text(expected(recording)["text"])
    wait_idle(page)
    assert vendor.model_requests[-1].headers["authorization"] == f"Bearer {key}"

    # Taken before the first call: the key the first visit used is nowhere in it (the module names are: the
    # search would find a string).
    found = page.evaluate(
        """async ([cache, url, words]) => {
             const bytes = await (await (await caches.open(cache)).match(url)).arrayBuffer();
             const text = new TextDecoder("latin1").decode(bytes);
             return words.map((w) => text.includes(w));
           }""", [CACHE, url, [key, "pydantic_core", "pycore.wire"]])
    assert found == [False, True, True]
    page.context.close()


def test_a_snapshot_that_cannot_be_restored_or_of_other_files_is_thrown_away(browser: Browser, site_url: str):
    page = open_app(browser, site_url, first_visit=True)
    url = wait_snapshot_kept(page)
    stale = url.rsplit("/", 1)[0] + "/000000000000000000000000"
    # Damage the snapshot (its head and size stay, its memory is not what was saved), and add one of other files.
    page.evaluate(
        """async ([cache, url, stale]) => {
             const c = await caches.open(cache);
             const response = await c.match(url);
             const bytes = new Uint8Array(await response.arrayBuffer());
             bytes.fill(0x5a, 1 << 20);
             await c.put(url, new Response(bytes, { headers: response.headers }));
             await c.put(stale, new Response(bytes, { headers: response.headers }));
           }""", [CACHE, url, stale])
    page.reload()
    wait_core(page)
    assert booted(page) == "fresh"
    expect(page.get_by_role("status")).to_contain_text("Ready")
    # The damaged one went and a good one took its place; the stale one went when the snapshots were read.
    assert wait_snapshot_kept(page) == url
    page.reload()
    wait_core(page)
    assert booted(page) == "snapshot"
    page.context.close()


def test_the_first_visit_s_core_that_made_the_snapshot_stops_a_stream_and_reads_one_to_its_end(
        browser: Browser, site_url: str, vendor: VendorReplay):
    """The boot that makes the snapshot gave Python Pyodide's recording `js` module; an `AbortController` made
    through it aborted with the wrong receiver (`TypeError: Illegal invocation` on the card of an Ollama reply
    that ended, or on Stop) until the real globals came back once the snapshot was taken."""
    page = open_app(browser, site_url, first_visit=True)
    assert booted(page) == "fresh"
    slow = "openai/chat-stream-text-usage"
    vendor.script(slow, delay=0.4)
    configure(page, vendor="openai", base=vendor.url, key="sk-first-visit", model="gpt-4o-mini")
    send(page, "Slowly, please")
    expect(last_reply(page).locator(".content")).to_contain_text("capital")
    page.get_by_role("button", name="Stop", exact=True).click()
    wait_idle(page)
    expect(last_reply(page)).to_have_attribute("data-state", "interrupted")
    ended = "ollama/chat-stream-text"
    vendor.script(ended)
    configure(page, vendor="ollama", base=vendor.url, key="", model="llama3.2", name="Local", new_profile=True)
    send(page, "Count to five")
    expect(last_reply(page).locator(".content")).to_have_text(expected(ended)["text"].strip())
    wait_idle(page)
    expect(last_reply(page)).to_have_attribute("data-state", "done")
    page.context.close()
