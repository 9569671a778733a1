"""Conversation journeys: regenerate and edit-and-resend keep both branches (‹ 1/2 ›), search finds
any text, delete can be undone, export (JSON and Markdown) and import into another browser bring it
all back, a bad file is refused with a clear error, and the API key is in no export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from journeys import (
    REPLY_TIMEOUT_MS,
    browser_storage_dump,
    choose_file,
    configure,
    last_reply,
    open_app,
    replies,
    send,
    wait_idle,
    wait_ui,
)
from playwright.sync_api import Browser, Page, expect
from vendor_replay import VendorReplay, expected

pytestmark = pytest.mark.e2e

KEY = "sk-test-export-5a7c2e9b1d3f4860"
FIRST = "openai/chat-stream-text-usage"
SECOND = "openai/chat-stream-azure-content-filter"
THIRD = "ollama/chat-stream-text"


def branch_label(message) -> str:
    return message.locator(".branch-pos").inner_text()


def build_branched_conversation(page: Page, vendor: VendorReplay) -> None:
    vendor.script(FIRST, SECOND)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    send(page, "What is the capital of the UK?")
    expect(last_reply(page).locator(".content")).to_have_text(expected(FIRST)["text"], timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)

    # Regenerate: a second reply to the same question, kept beside the first.
    last_reply(page).get_by_role("button", name="Regenerate").click()
    expect(last_reply(page).locator(".content")).to_have_text(expected(SECOND)["text"], timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    expect(replies(page)).to_have_count(1)
    expect(last_reply(page).locator(".branch-pos")).to_have_text("2/2")
    last_reply(page).get_by_role("button", name="Previous version").click()
    expect(last_reply(page).locator(".content")).to_have_text(expected(FIRST)["text"])
    expect(last_reply(page).locator(".branch-pos")).to_have_text("1/2")
    # The regenerated request carried the question, not the first answer.
    regen = vendor.model_requests[1].json["messages"]
    assert [m["role"] for m in regen] == ["user"]

    # Edit-and-resend, on another vendor: a new branch of the user's message, with its own reply.
    vendor.script(THIRD)
    configure(page, vendor="ollama", base=vendor.url, key="", model="llama3.2", name="Local", new_profile=True)
    user = page.locator(".transcript li.msg.user")
    user.get_by_role("button", name="Edit").click()
    field = user.get_by_role("textbox", name="Edit message")
    field.fill("Count to five")
    field.press("Enter")
    expect(last_reply(page).locator(".content")).to_have_text(expected(THIRD)["text"].strip(), timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    user = page.locator(".transcript li.msg.user")
    expect(user.locator(".content")).to_have_text("Count to five")
    expect(user.locator(".branch-pos")).to_have_text("2/2")
    assert vendor.model_requests[2].path == "/api/chat"
    assert [m["content"] for m in vendor.model_requests[2].json["messages"]] == ["Count to five"]
    user.get_by_role("button", name="Previous version").click()
    expect(page.locator(".transcript li.msg.user .content")).to_have_text("What is the capital of the UK?")
    expect(last_reply(page).locator(".branch-pos")).to_have_text("1/2")


def test_branches_search_delete_undo_export_and_import(browser: Browser, site_url: str, vendor: VendorReplay,
                                                       tmp_path: Path):
    page = open_app(browser, site_url)
    build_branched_conversation(page, vendor)
    sidebar = page.get_by_role("complementary")

    # Search across all text, including a reply on a branch that is not on screen.
    sidebar.get_by_role("searchbox", name="Search all messages").fill("Denmark")
    hit = sidebar.locator(".search-results li")
    expect(hit).to_have_count(1)
    expect(hit).to_contain_text("Capital of Denmark")
    sidebar.get_by_role("searchbox", name="Search all messages").fill("")

    # Rename, then delete and undo.
    sidebar.get_by_role("button", name="Rename: What is the capital of the UK?").click()
    field = sidebar.get_by_role("textbox", name="New title")
    field.fill("Capitals")
    field.press("Enter")
    expect(sidebar.get_by_role("button", name="Capitals", exact=True)).to_be_visible()
    sidebar.get_by_role("button", name="Delete: Capitals").click()
    expect(sidebar.get_by_role("button", name="Capitals", exact=True)).to_have_count(0)
    page.get_by_role("button", name="Undo").click()
    expect(sidebar.get_by_role("button", name="Capitals", exact=True)).to_be_visible()

    # Export all (JSON) and this conversation (Markdown).
    sidebar.get_by_role("button", name="Capitals", exact=True).click()
    page.get_by_role("button", name="Export", exact=True).click()
    with page.expect_download() as download:
        page.get_by_role("button", name="All conversations (JSON)").click()
    exported = tmp_path / "all.json"
    download.value.save_as(exported)
    page.get_by_role("button", name="Export", exact=True).click()
    with page.expect_download() as download:
        page.get_by_role("button", name="This conversation (Markdown)").click()
    markdown = tmp_path / "one.md"
    download.value.save_as(markdown)
    text = exported.read_text()
    for reply in (FIRST, SECOND, THIRD):
        assert json.dumps(expected(reply)["text"])[1:-1].strip() in text
    # Markdown is the branch on screen (the first question, its first answer); JSON keeps every branch.
    assert expected(FIRST)["text"] in markdown.read_text() and "Denmark" not in markdown.read_text()
    assert KEY not in text and KEY not in markdown.read_text()
    assert KEY not in browser_storage_dump(page)
    page.context.close()

    # Another browser: a bad file is refused and changes nothing; the export comes back whole.
    other = open_app(browser, site_url)
    wait_ui(other)  # a first run: the setup card shows in the chat, nothing to close
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "orizuru.conversations", "version": 1, "conversations": [{"id": 5}]}')
    choose_file(other, "Import", bad)
    expect(other.get_by_role("alert")).to_contain_text("Import failed, nothing was changed")
    expect(other.get_by_role("complementary").locator(".conversations li")).to_have_count(0)

    choose_file(other, "Import", exported)
    expect(other.get_by_text("Imported 1 conversation(s).")).to_be_visible()
    other.get_by_role("complementary").get_by_role("button", name="Capitals", exact=True).click()
    user = other.locator(".transcript li.msg.user")
    expect(user.locator(".branch-pos")).to_have_text("1/2")
    user.get_by_role("button", name="Next version").click()
    expect(last_reply(other).locator(".content")).to_have_text(expected(THIRD)["text"].strip())
    other.context.close()
