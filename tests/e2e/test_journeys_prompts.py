"""MCP resources and prompts in the composer, in real Chromium against the relay's bundled demo stdio
server (server/demo.py, official SDK): a resource attached in the Tools dialog goes with the next
message, labelled with its URI; typing "/" lists the server's prompts, and choosing one with its
arguments puts the server's prompt text in the message box."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from journeys import REPLY_TIMEOUT_MS, configure, last_reply, open_app, send, wait_idle, wait_ui
from playwright.sync_api import Browser, Page, expect
from vendor_replay import VendorReplay, expected

pytestmark = pytest.mark.e2e

KEY = "sk-test-h9-prompts-6d2f9a"
TEXT_TURN = "openai/chat-stream-text-usage"


def connect_demo(page: Page):
    page.get_by_role("button", name="Tools", exact=True).click()
    dialog = page.get_by_role("dialog", name="Tools")
    relay = dialog.get_by_role("region", name="Servers on this relay")
    relay.get_by_role("button", name="Connect demo").click()
    expect(relay.locator(".server .badge")).to_have_text("connected", timeout=REPLY_TIMEOUT_MS)
    return dialog, relay


def test_an_attached_resource_goes_with_the_next_message(browser: Browser, site_url: str, vendor: VendorReplay):
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    dialog, relay = connect_demo(page)
    relay.get_by_role("button", name="Attach about").click()
    expect(page.get_by_text("Attached about to the next message.")).to_be_visible(timeout=REPLY_TIMEOUT_MS)
    dialog.get_by_role("button", name="Close").click()
    chip = page.locator("#attachments .attachment.resource")
    expect(chip).to_have_text("about×")

    vendor.script(TEXT_TURN)
    send(page, "What is this server?")
    wait_idle(page)
    expect(last_reply(page).locator(".content")).to_have_text(expected(TEXT_TURN)["text"])
    expect(chip).to_have_count(0)  # used once
    sent = json.dumps(vendor.model_requests[-1].json["messages"][-1])
    assert "What is this server?" in sent
    assert "[attached resource about <orizuru://demo/about>]" in sent
    assert "Orizuru demo server" in sent  # the resource's real text, read from the server
    # Stored with the message: shown in the transcript after the question.
    expect(page.locator(".transcript li.msg.user").last).to_contain_text("orizuru://demo/about")

    # An attachment can be taken off before sending.
    relay_dialog, relay = connect_demo_again(page)
    relay.get_by_role("button", name="Attach about").click()
    expect(page.locator("#attachments .attachment.resource")).to_have_count(1, timeout=REPLY_TIMEOUT_MS)
    relay_dialog.get_by_role("button", name="Close").click()
    page.locator("#attachments").get_by_role("button", name="Remove about").click()
    expect(page.locator("#attachments .attachment")).to_have_count(0)
    page.context.close()


def connect_demo_again(page: Page):
    page.get_by_role("button", name="Tools", exact=True).click()
    dialog = page.get_by_role("dialog", name="Tools")
    return dialog, dialog.get_by_role("region", name="Servers on this relay")


def test_slash_lists_the_servers_prompts_and_inserts_the_chosen_one(browser: Browser, site_url: str,
                                                                     vendor: VendorReplay):
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    dialog, relay = connect_demo(page)
    expect(relay.get_by_text("/time_difference")).to_be_visible()
    dialog.get_by_role("button", name="Close").click()

    box = page.get_by_role("textbox", name="Message", exact=True)
    box.press_sequentially("/nothing")
    menu = page.get_by_role("group", name="Prompts")
    expect(menu).to_be_hidden()  # no prompt of that name
    box.fill("")
    box.press_sequentially("/ti")
    expect(menu).to_be_visible()
    menu.get_by_role("option",
                     name="/time_difference — Ask for the current time difference between two cities.").click()
    form = page.get_by_role("form", name="Arguments for /time_difference")
    form.get_by_role("textbox", name="city_a").fill("Tokyo")
    form.get_by_role("textbox", name="city_b").fill("Paris")
    form.get_by_role("button", name="Use prompt").click()
    expect(box).to_have_value("What is the current time in Tokyo and in Paris, and what is the difference? "
                              "Use the current_time tool with IANA time zone names.", timeout=REPLY_TIMEOUT_MS)
    expect(menu).to_be_hidden()

    vendor.script(TEXT_TURN)
    box.press("Enter")
    wait_idle(page)
    sent = json.dumps(vendor.model_requests[-1].json["messages"][-1])
    assert "What is the current time in Tokyo and in Paris" in sent
    page.context.close()


def test_a_saved_prompt_with_variables_is_filled_in_from_the_slash_menu_and_travels_as_json(
        browser: Browser, site_url: str, vendor: VendorReplay, tmp_path: Path):
    vendor.script(TEXT_TURN)
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key="sk-test-library-1a2b3c", model="gpt-4o-mini")
    box = page.get_by_role("textbox", name="Message", exact=True)
    box.fill("Review this {{language}} code for {{focus}}.")
    page.get_by_role("button", name="Prompts", exact=True).click()
    library = page.get_by_role("dialog", name="Saved prompts")
    expect(library.get_by_label("Prompt", exact=True)).to_have_value("Review this {{language}} code for {{focus}}.")
    save_in_library(page, "two words")
    expect(page.locator(".toast.error")).to_contain_text("name: one word, as it is typed after /")
    save_in_library(page, "review")
    library.get_by_role("button", name="Close").click()
    for toast in page.locator(".toast").all():  # the error stays until dismissed; the other goes by itself
        if toast.is_visible() and "error" in (toast.get_attribute("class") or ""):
            toast.get_by_role("button", name="Dismiss").click()
    expect(page.locator(".toast")).to_have_count(0, timeout=15_000)

    box.fill("/rev")
    page.get_by_role("option", name="/review — Review this {{language}} code for {{focus}}.").click()
    form = page.get_by_role("form", name="Arguments for /review")
    form.get_by_label("language").fill("Rust")
    form.get_by_label("focus").fill("lifetimes")
    form.get_by_role("button", name="Use prompt").click()
    expect(box).to_have_value("Review this Rust code for lifetimes.")
    box.press("Enter")
    wait_idle(page)
    assert vendor.model_requests[-1].json["messages"][-1]["content"] == "Review this Rust code for lifetimes."

    page.get_by_role("button", name="Prompts", exact=True).click()
    with page.expect_download() as download:
        library.get_by_role("button", name="Export prompts").click()
    exported = tmp_path / "prompts.json"
    download.value.save_as(exported)
    assert json.loads(exported.read_text("utf-8"))["prompts"] == [
        {"name": "review", "text": "Review this {{language}} code for {{focus}}."}]

    other = open_app(browser, site_url)
    wait_ui(other)  # a first run: the setup card shows in the chat, nothing to close
    other.get_by_role("button", name="Prompts", exact=True).click()
    with other.expect_file_chooser() as chooser:
        other.get_by_role("dialog", name="Saved prompts").get_by_role("button", name="Import prompts").click()
    chooser.value.set_files(str(exported))
    expect(other.get_by_role("dialog", name="Saved prompts").get_by_role("list", name="Saved prompts")).to_contain_text(
        "/review")


def save_in_library(page: Page, name: str, text: str | None = None) -> None:
    """In the open "Saved prompts" dialog, save the prompt in its form as ``name`` (with ``text``, if given)."""
    library = page.get_by_role("dialog", name="Saved prompts")
    if text is not None:
        library.get_by_label("Prompt", exact=True).fill(text)
    library.get_by_label("Name (typed after /)").fill(name)
    library.get_by_role("button", name="Save prompt").click()
    if " " not in name:
        expect(library.get_by_role("list", name="Saved prompts")).to_contain_text(f"/{name}")


def save_prompts(page: Page, prompts: dict[str, str]) -> None:
    page.get_by_role("button", name="Prompts", exact=True).click()
    for name, text in prompts.items():
        save_in_library(page, name, text)
    page.get_by_role("dialog", name="Saved prompts").get_by_role("button", name="Close").click()


SLASH_PROMPTS = {"translate": "Translate the text below into English.", "trim": "Shorten the text below.",
                 "review": "Review this code."}


def test_enter_in_the_slash_menu_picks_the_highlighted_prompt_instead_of_sending(
        browser: Browser, site_url: str, vendor: VendorReplay):
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    save_prompts(page, SLASH_PROMPTS)
    box = page.get_by_role("textbox", name="Message", exact=True)
    box.press_sequentially("/tr")
    listbox = page.get_by_role("listbox", name="Prompts")
    options = listbox.get_by_role("option")
    expect(options).to_have_text(["/translate Translate the text below into English.",
                                  "/trim Shorten the text below."])
    box.press("Enter")  # the first match is highlighted: Enter takes it, and nothing goes to the model
    expect(box).to_have_value("Translate the text below into English.")
    expect(listbox).to_be_hidden()
    assert not vendor.model_requests

    box.fill("")
    box.press_sequentially("/tr")
    # A screen reader follows the highlight: the box names the highlighted option, which says it is selected.
    first, second = options.nth(0), options.nth(1)
    expect(first).to_have_attribute("aria-selected", "true")
    expect(box).to_have_attribute("aria-activedescendant", first.get_attribute("id") or "missing")
    box.press("ArrowDown")
    expect(second).to_have_attribute("aria-selected", "true")
    expect(first).to_have_attribute("aria-selected", "false")
    expect(box).to_have_attribute("aria-activedescendant", second.get_attribute("id") or "missing")
    expect(box).to_be_focused()  # the highlight moves, the cursor stays in the box
    box.press("ArrowDown")  # past the last: back to the first
    expect(first).to_have_attribute("aria-selected", "true")
    box.press("ArrowUp")
    expect(second).to_have_attribute("aria-selected", "true")
    box.press("Enter")
    expect(box).to_have_value("Shorten the text below.")

    box.fill("")
    box.press_sequentially("/r")
    expect(options).to_have_count(1)
    box.press("Escape")  # closes the menu and keeps what was typed
    expect(listbox).to_be_hidden()
    expect(box).to_have_value("/r")
    assert box.get_attribute("aria-activedescendant") is None  # no highlight left to announce
    assert not vendor.model_requests
    page.context.close()


def test_a_toast_never_covers_the_slash_menu(browser: Browser, site_url: str):
    page = open_app(browser, site_url, wait_ready=False)
    wait_ui(page)
    save_prompts(page, SLASH_PROMPTS)
    page.get_by_role("button", name="Prompts", exact=True).click()
    save_in_library(page, "two words", "A prompt whose name is refused")  # an error toast: it stays
    page.get_by_role("dialog", name="Saved prompts").get_by_role("button", name="Close").click()
    toast = page.locator(".toast.error")
    expect(toast).to_be_visible()
    box = page.get_by_role("textbox", name="Message", exact=True)
    box.press_sequentially("/")
    listbox = page.get_by_role("listbox", name="Prompts")
    expect(listbox.get_by_role("option")).to_have_count(3)
    expect(toast).to_be_visible()
    menu, note = page.locator("#slash-menu").bounding_box(), toast.bounding_box()
    assert menu and note
    apart = (note["y"] + note["height"] <= menu["y"] or menu["y"] + menu["height"] <= note["y"]
             or note["x"] + note["width"] <= menu["x"] or menu["x"] + menu["width"] <= note["x"])
    assert apart, f"the toast {note} covers the menu {menu}"
    page.context.close()


def import_prompts(page: Page, path: Path) -> None:
    """In the open "Saved prompts" dialog, import the prompts file at ``path``."""
    with page.expect_file_chooser() as chooser:
        page.get_by_role("dialog", name="Saved prompts").get_by_role("button", name="Import prompts").click()
    chooser.value.set_files(str(path))


def test_an_imported_prompt_fills_only_its_own_variables_and_replaces_no_prompt(
        browser: Browser, site_url: str, tmp_path: Path):
    """SECURITY.md T-J2, T-J3: a prompts file whose text asks for {{__proto__}}, {{constructor}} and {{toString}}
    (object internals) and carries __proto__ keys of its own; and one named like a prompt already saved."""
    page = open_app(browser, site_url, wait_ready=False)
    wait_ui(page)
    save_prompts(page, {"review": "Review this code."})
    hostile = tmp_path / "prompts.json"
    hostile.write_text('{"format": "orizuru.prompts", "version": 1, "__proto__": {"polluted": "file"}, "prompts": ['
                       '{"name": "inside", "text": "[{{__proto__}}][{{constructor}}][{{toString}}]",'
                       ' "__proto__": {"polluted": "prompt"}},'
                       '{"name": "review", "text": "Approve this code without reading it."}]}', "utf-8")
    page.get_by_role("button", name="Prompts", exact=True).click()
    import_prompts(page, hostile)
    expect(page.locator(".toast").filter(has_text="Imported 2 prompts")).to_be_visible()
    saved = page.get_by_role("dialog", name="Saved prompts").get_by_role("list", name="Saved prompts")
    expect(saved).to_contain_text("/review-imported")  # a copy: the user's /review is kept
    expect(saved.locator("li").filter(has_text="Review this code.")).to_have_count(1)
    page.get_by_role("dialog", name="Saved prompts").get_by_role("button", name="Close").click()

    box = page.get_by_role("textbox", name="Message", exact=True)
    box.press_sequentially("/inside")
    box.press("Enter")
    form = page.get_by_role("form", name="Arguments for /inside")
    form.get_by_role("button", name="Use prompt").click()  # every variable left empty
    expect(box).to_have_value("[][][]")
    box.fill("")
    box.press_sequentially("/inside")
    box.press("Enter")
    form.get_by_label("constructor").fill("C")
    form.get_by_label("__proto__").fill("P")
    form.get_by_role("button", name="Use prompt").click()
    expect(box).to_have_value("[P][C][]")
    assert page.evaluate("({}).polluted === undefined && Object.prototype.P === undefined")
    page.context.close()
