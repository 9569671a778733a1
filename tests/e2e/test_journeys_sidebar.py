"""Conversations that stay findable: a new conversation is named by its own model after the first reply
(unless Settings turns that off); the sidebar groups by date, pins, folders; search marks what it found;
many conversations delete at once with one Undo; a reload keeps pins and folders. Plus the theme switch."""

from __future__ import annotations

import pytest
from journeys import REPLY_TIMEOUT_MS, configure, open_app, open_settings, send, wait_idle
from playwright.sync_api import Browser, Page, expect
from vendor_replay import VendorReplay, with_text

pytestmark = pytest.mark.e2e

KEY = "sk-test-sidebar-9a8b7c6d5e"
TEXT = "openai/chat-stream-text-usage"


def sidebar(page: Page):
    return page.get_by_role("complementary", name="Conversations")


def test_the_first_reply_names_the_conversation_with_its_own_model(browser: Browser, site_url: str,
                                                                    vendor: VendorReplay):
    vendor.script(TEXT)
    vendor.script_body("title", with_text(TEXT, '"Sample sizes for surveys."'),
                       content_type="text/event-stream; charset=utf-8")
    page = open_app(browser, site_url, auto_title=True)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    send(page, "how many people should I survey for a 5% margin of error")
    wait_idle(page)
    expect(sidebar(page).get_by_role("button", name="Sample sizes for surveys", exact=True)).to_be_visible(
        timeout=REPLY_TIMEOUT_MS)  # quotes and the full stop taken off
    asked = vendor.model_requests[-1].json
    assert asked["model"] == "gpt-4o-mini" and "title for this conversation" in asked["messages"][0]["content"]
    assert "5% margin of error" in asked["messages"][-1]["content"] and "tools" not in asked

    # Turned off in Settings: the next conversation keeps its first line, and no extra request is made.
    page.get_by_role("button", name="Settings", exact=True).click()
    dialog = page.get_by_role("dialog", name="Settings")
    dialog.get_by_label("Name new conversations with the conversation's model after the first reply").uncheck()
    dialog.get_by_role("button", name="Close").click()
    vendor.script(TEXT)
    page.get_by_role("button", name="New chat").first.click()
    send(page, "second question")
    wait_idle(page)
    expect(sidebar(page).get_by_role("button", name="second question", exact=True)).to_be_visible()
    page.wait_for_timeout(500)
    assert len(vendor.model_requests) == 3


def chats(page: Page, vendor: VendorReplay, *titles: str) -> None:
    """One conversation per title (its first message), each answered."""
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    for title in titles:
        vendor.script(TEXT)
        page.get_by_role("button", name="New chat").first.click()
        send(page, title)
        wait_idle(page)


def test_pins_folders_search_marks_and_bulk_delete(browser: Browser, site_url: str, vendor: VendorReplay):
    page = open_app(browser, site_url)
    chats(page, vendor, "alpha plans", "beta budget", "gamma notes", "delta trip")
    side = sidebar(page)
    expect(side.locator(".group-label")).to_have_text(["Today"])

    side.get_by_role("button", name="Pin: beta budget").click()
    side.get_by_role("button", name="Move to folder: gamma notes").click()
    side.get_by_label("Folder name (empty: no folder)").fill("Travel")
    side.get_by_label("Folder name (empty: no folder)").press("Enter")
    side.get_by_role("button", name="Move to folder: delta trip").click()
    side.get_by_label("Folder name (empty: no folder)").fill("Travel")
    side.get_by_label("Folder name (empty: no folder)").press("Enter")
    expect(side.locator(".group-label")).to_have_text(["Pinned", "Travel", "Today"])
    expect(side.locator(".group").nth(1).locator(".open")).to_have_text(["delta trip", "gamma notes"])

    page.reload()
    expect(page.locator("html")).to_have_attribute("data-ui", "ready", timeout=REPLY_TIMEOUT_MS)
    expect(side.locator(".group-label")).to_have_text(["Pinned", "Travel", "Today"])
    expect(side.get_by_role("button", name="Unpin: beta budget")).to_have_attribute("aria-pressed", "true")

    # Search marks the words it matched, as text (a hostile query is not HTML).
    page.get_by_role("searchbox", name="Search all messages").fill("budget")
    marks = side.locator("#search-results mark")
    expect(marks.first).to_have_text("budget")
    page.get_by_role("searchbox", name="Search all messages").fill("<img src=x onerror=alert(1)>")
    expect(side.locator("#search-results")).to_contain_text("Nothing found")
    page.get_by_role("searchbox", name="Search all messages").fill("")

    # Select two, delete them at once; one Undo brings both back.
    side.get_by_role("button", name="Select", exact=True).click()
    side.get_by_role("checkbox", name="Select: alpha plans").check()
    side.get_by_role("checkbox", name="Select: gamma notes").check()
    side.get_by_role("button", name="Delete selected (2)").click()
    expect(side.locator(".open")).to_have_text(["beta budget", "delta trip"])
    page.locator(".toast").get_by_role("button", name="Undo").click()
    expect(side.locator("li[data-id] .open")).to_have_count(4)


# What the focused element is: where it sits, and its name.
FOCUSED = """() => {
  const el = document.activeElement;
  if (el === document.body) return {where: 'page', name: 'the page', row: null};
  const where = el.closest('#sidebar') ? 'sidebar' : el.closest('.topbar') ? 'top bar'
    : el.closest('#composer') ? 'composer' : 'other';
  return {where, name: el.getAttribute('aria-label') || el.id || el.textContent.trim(),
          row: el.closest('#conversations li[data-id]')?.querySelector('.open')?.textContent ?? null};
}"""


def test_the_keyboard_reaches_the_top_bar_and_message_box_first_and_a_row_is_one_stop(
        browser: Browser, site_url: str, vendor: VendorReplay):
    page = open_app(browser, site_url)
    chats(page, vendor, "alpha plans", "beta budget", "gamma notes")
    for _ in range(80):  # Tab past the page's last stop: the next Tab starts from its top
        page.keyboard.press("Tab")
        if page.evaluate(FOCUSED)["where"] == "page":
            break
    stops = []
    for _ in range(80):  # once round the page
        page.keyboard.press("Tab")
        stops.append(page.evaluate(FOCUSED))
        if stops[-1]["where"] == "page":
            break
    names = [stop["name"] for stop in stops]
    first_in_sidebar = next(i for i, stop in enumerate(stops) if stop["where"] == "sidebar")
    assert names.index("Message") < first_in_sidebar, f"the conversation list comes before the message box: {names}"
    assert names.index("open-settings") < first_in_sidebar, names
    in_rows = [stop for stop in stops if stop["row"]]
    assert [stop["name"] for stop in in_rows] == ["gamma notes"], f"a row is not one Tab stop: {names}"

    # Arrows move between the rows and, within a row, along its actions; Enter opens.
    side = sidebar(page)
    for _ in range(len(stops)):
        page.keyboard.press("Tab")
        if page.evaluate(FOCUSED)["row"]:
            break
    expect(side.get_by_role("button", name="gamma notes", exact=True)).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(side.get_by_role("button", name="beta budget", exact=True)).to_be_focused()
    page.keyboard.press("End")
    expect(side.get_by_role("button", name="alpha plans", exact=True)).to_be_focused()
    page.keyboard.press("ArrowRight")
    expect(side.get_by_role("button", name="Pin: alpha plans")).to_be_focused()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(side.get_by_role("button", name="Rename: alpha plans")).to_be_focused()
    page.keyboard.press("ArrowLeft")
    expect(side.get_by_role("button", name="Move to folder: alpha plans")).to_be_focused()
    page.keyboard.press("ArrowUp")  # the row above, on its title
    expect(side.get_by_role("button", name="beta budget", exact=True)).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".transcript li.msg.user .content")).to_have_text(["beta budget"])
    page.keyboard.press("Shift+Tab")  # out of the list, then back in: onto the row last used
    page.keyboard.press("Tab")
    expect(side.get_by_role("button", name="beta budget", exact=True)).to_be_focused()


def test_the_theme_switch_overrides_the_system_scheme_and_is_remembered(browser: Browser, site_url: str):
    context = browser.new_context(color_scheme="light")
    page = open_app(browser, site_url, context=context, wait_ready=False)
    expect(page.locator("html")).to_have_attribute("data-ui", "ready", timeout=REPLY_TIMEOUT_MS)
    background = "getComputedStyle(document.body).backgroundColor"
    assert page.evaluate(background) == "rgb(251, 251, 250)"
    dialog = open_settings(page)
    dialog.get_by_label("Theme").select_option("dark")
    assert page.evaluate(background) == "rgb(23, 23, 26)"
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    assert page.evaluate(background) == "rgb(23, 23, 26)"
    dialog = open_settings(page)
    dialog.get_by_label("Theme").select_option("system")
    assert page.evaluate(background) == "rgb(251, 251, 250)"
    context.close()


def test_a_conversation_gone_from_the_store_before_its_row_is_clicked_says_so(browser: Browser, site_url: str,
                                                                              vendor: VendorReplay):
    # Chat.#open read the store's null (a conversation purged by another tab, or the site's data cleared, while
    # this tab still listed it) as a record: the toast said "Cannot read properties of null (reading 'conversation')".
    page = open_app(browser, site_url)
    chats(page, vendor, "alpha plans", "beta budget")
    side = sidebar(page)
    row = side.locator("li[data-id]", has=page.get_by_role("button", name="alpha plans", exact=True))
    gone = row.get_attribute("data-id")
    page.evaluate("""(id) => new Promise((resolve, reject) => {
        const open = indexedDB.open("orizuru");
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction("conversations", "readwrite");
          tx.objectStore("conversations").delete(id);
          tx.oncomplete = () => { open.result.close(); resolve(); };
          tx.onerror = () => reject(tx.error);
        };
    })""", gone)
    side.get_by_role("button", name="alpha plans", exact=True).click()
    expect(page.locator(".toast", has_text="That conversation is no longer in this browser")).to_be_visible()
    expect(page.locator(".transcript li.msg.user .content")).to_have_text(["beta budget"])  # what was open stays open
