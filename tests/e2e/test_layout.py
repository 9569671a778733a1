"""Layout as a new user sees it (issue 16, defect 6), in real Chromium at 1280x800 and 390x844, light and
dark, measured rather than looked at: colours and contrast from getComputedStyle, positions from
getBoundingClientRect.

- primary buttons (Send, New chat, Connect, Add server) stay readable, at rest and on hover, in both
  colour schemes (WCAG contrast of text on background at least 4.5);
- a reply with a long code line scrolls inside its code block: the chat column shrinks, the Focus
  panel and the Send button stay on screen;
- at phone width the top bar fits in two rows, and the closed sidebar leaves nothing on screen;
- the unlock row for a saved key lines up with the other fields, with a label;
- the top bar's model field suggests the vendor's models (models.list) and the current one, and still
  takes any name;
- the Focus panel is closed on first load and stays open across a reload once opened.
"""

from __future__ import annotations

import re

import pytest
from conftest import ROOT
from journeys import (
    REPLY_TIMEOUT_MS,
    add_server,
    configure,
    last_reply,
    open_app,
    open_settings,
    send,
    wait_core,
    wait_idle,
    wait_key_saved,
)
from journeys_tool_servers import serve_tools
from playwright.sync_api import Browser, Page, expect
from test_journeys_documents import DOCUMENTS, PASTE, a_file, data_transfer
from vendor_replay import VendorReplay, with_text

pytestmark = pytest.mark.e2e

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
KEY = "sk-test-layout-5e1c0a9d"
TEXT_TURN = "openai/chat-stream-text-usage"
LONG_LINE = ("result = some_function_with_a_rather_long_name(argument_one=1, argument_two=2, argument_three=3, "
             "argument_four=4, argument_five=5, argument_six=6, argument_seven=7, argument_eight=8)")


def new_page(browser: Browser, url: str, viewport: dict[str, int], scheme: str = "light") -> Page:
    return open_app(browser, url, context=browser.new_context(viewport=viewport, color_scheme=scheme))


def close_first_run(page: Page) -> None:
    """The first run shows its setup card in the chat (no dialog to close): wait until it is drawn."""
    expect(page.locator("html")).to_have_attribute("data-ui", "ready")
    expect(page.get_by_role("region", name="Connect a model")).to_be_visible()


# --- contrast --------------------------------------------------------------------------------------------

def luminance(rgb: tuple[float, float, float]) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def parse_rgb(css: str) -> tuple[tuple[float, float, float], float]:
    numbers = [float(n) for n in re.findall(r"[\d.]+", css)]
    assert css.startswith("rgb") and len(numbers) in (3, 4), css
    return (numbers[0], numbers[1], numbers[2]), (numbers[3] if len(numbers) == 4 else 1.0)


def text_contrast(page: Page, locator) -> float:
    """Contrast of the element's text on what is behind it: its own background, composited over the
    nearest ancestor's opaque one where it is translucent."""
    colours = locator.evaluate("""(el) => {
      const layers = [];
      for (let node = el; node; node = node.parentElement) layers.push(getComputedStyle(node).backgroundColor);
      return {text: getComputedStyle(el).color, layers};
    }""")
    text, _ = parse_rgb(colours["text"])
    background = (255.0, 255.0, 255.0)
    for layer in reversed(colours["layers"]):  # from the root down to the element
        rgb, alpha = parse_rgb(layer)
        background = tuple(alpha * c + (1 - alpha) * under for c, under in zip(rgb, background, strict=True))
    return contrast(text, background)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_primary_buttons_stay_readable_at_rest_and_on_hover(browser: Browser, relay_url: str, scheme: str):
    page = new_page(browser, relay_url, DESKTOP, scheme)
    close_first_run(page)
    page.get_by_role("button", name="Tools", exact=True).click()
    tools = page.get_by_role("dialog", name="Tools")
    buttons = {
        "Add server": tools.get_by_role("button", name="Add server"),
        "Connect": tools.get_by_role("button", name="Connect capitals"),
    }
    found = {}
    for name, button in buttons.items():
        expect(button).to_be_visible()
        found[name] = [text_contrast(page, button)]
        button.hover()
        found[name].append(text_contrast(page, button))
    tools.get_by_role("button", name="Close").click()
    page.get_by_role("textbox", name="Message", exact=True).fill("hello")  # Send is enabled
    for name, button in {"New chat": page.get_by_role("button", name="New chat"),
                         "Send": page.get_by_role("button", name="Send", exact=True)}.items():
        page.mouse.move(0, 0)
        found[name] = [text_contrast(page, button)]
        button.hover()
        found[name].append(text_contrast(page, button))
    low = {name: [round(c, 2) for c in pair] for name, pair in found.items() if min(pair) < 4.5}
    assert low == {}, f"contrast below 4.5 (at rest, on hover) in {scheme}: {low}"
    page.context.close()


# --- a long code line ------------------------------------------------------------------------------------

def reply_with(vendor: VendorReplay, text: str) -> None:
    vendor.script_body("long-line", with_text(TEXT_TURN, text), content_type="text/event-stream; charset=utf-8")


def open_focus_panel(page: Page) -> None:
    toggle = page.get_by_role("button", name="Focus", exact=True)
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
    expect(page.get_by_role("region", name="Focus memory")).to_be_visible()


def test_a_long_code_line_scrolls_inside_its_block_and_the_panels_stay_on_screen(
        browser: Browser, site_url: str, vendor: VendorReplay):
    page = new_page(browser, site_url, DESKTOP)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    open_focus_panel(page)
    reply_with(vendor, f"Run this:\n\n```python\n{LONG_LINE}\n```\n\nDone.")
    send(page, "One long line, please")
    wait_idle(page)
    code = last_reply(page).locator("pre code")
    expect(code).to_have_text(LONG_LINE + "\n")
    sizes = page.evaluate("""() => {
      const box = (selector) => document.querySelector(selector).getBoundingClientRect();
      const pre = [...document.querySelectorAll('.transcript pre')].pop();
      return {
        viewport: innerWidth, pageWidth: document.documentElement.scrollWidth,
        focusRight: box('#focus-aside').right, sendRight: box('#send').right, chatRight: box('.chat').right,
        preRight: pre.getBoundingClientRect().right, preScrolls: pre.scrollWidth > pre.clientWidth,
      };
    }""")
    assert sizes["focusRight"] <= sizes["viewport"], sizes  # the Focus panel is not pushed off screen
    assert sizes["sendRight"] <= sizes["viewport"], sizes
    assert sizes["pageWidth"] <= sizes["viewport"], sizes  # nothing to scroll sideways
    assert sizes["preRight"] <= sizes["chatRight"], sizes  # the code stays inside the chat column...
    assert sizes["preScrolls"], sizes  # ...and scrolls inside its own block
    page.context.close()


# --- phone width -----------------------------------------------------------------------------------------

def test_at_phone_width_the_top_bar_fits_and_the_closed_sidebar_leaves_nothing(
        browser: Browser, site_url: str, vendor: VendorReplay):
    page = new_page(browser, site_url, PHONE)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    bar = page.evaluate("""() => {
      const children = [...document.querySelector('.topbar').children]
        .filter((el) => el.getClientRects().length && el.getBoundingClientRect().width > 1)
        .map((el) => { const r = el.getBoundingClientRect();
                       return {id: el.id || el.className, top: r.top, bottom: r.bottom, right: r.right}; });
      return {height: document.querySelector('.topbar').getBoundingClientRect().height, children,
              viewport: innerWidth};
    }""")
    # Two rows (issue 29, item 14: one row left the profile and model too narrow to read): ☰ and the buttons,
    # then the profile and the model side by side.
    rows: list[float] = []  # each row's bottom: a control starting below it starts a new row
    for child in sorted(bar["children"], key=lambda c: c["top"]):
        if rows and child["top"] < rows[-1]:
            rows[-1] = max(rows[-1], child["bottom"])
        else:
            rows.append(child["bottom"])
    assert len(rows) <= 2, f"the top bar's controls are on more than two rows: {bar}"
    tops = {child["id"]: child["top"] for child in bar["children"]}
    assert abs(tops["profile-switch"] - tops["model-switch"]) < 4, bar
    assert all(child["right"] <= bar["viewport"] for child in bar["children"]), bar
    # What the bar folds away stays reachable: the controls by their names, the status for screen readers.
    for name in ("Show conversations", "Focus", "Tools", "Settings"):
        expect(page.get_by_role("button", name=name, exact=True)).to_be_visible()
    expect(page.get_by_role("combobox", name="Model for the next reply")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("Ready")

    # The closed sidebar is off screen and casts no shadow onto it; opened, it is there; Escape closes it.
    sidebar = page.locator("#sidebar")
    expect(sidebar).to_be_hidden()
    page.get_by_role("button", name="Show conversations", exact=True).click()
    expect(sidebar).to_be_visible()
    expect(page.get_by_role("button", name="New chat")).to_be_in_viewport()
    page.keyboard.press("Escape")
    expect(sidebar).to_be_hidden()
    shadow = sidebar.evaluate("(el) => ({shadow: getComputedStyle(el).boxShadow, "
                              "right: el.getBoundingClientRect().right})")
    assert shadow["right"] <= 0 and shadow["shadow"] == "none", shadow
    page.context.close()


# --- the unlock row ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_unlock_row_lines_up_with_the_other_fields(browser: Browser, site_url: str, vendor: VendorReplay,
                                                        viewport: dict[str, int]):
    page = new_page(browser, site_url, viewport)
    dialog = open_settings(page)
    dialog.get_by_label("Provider", exact=True).select_option("openai")
    dialog.get_by_label("API key", exact=True).fill(KEY)
    dialog.get_by_label("Base URL", exact=True).fill(vendor.url + "/v1")
    dialog.get_by_label("Model", exact=True).fill("gpt-4o-mini")
    dialog.get_by_label("Save the key in this browser, encrypted with a passphrase").check()
    dialog.locator("#passphrase").fill("correct horse")
    dialog.get_by_role("button", name="Save", exact=True).click()
    expect(dialog).to_be_hidden()
    wait_key_saved(page)
    page.reload()
    wait_core(page)
    page.get_by_role("button", name="Settings", exact=True).click()
    unlock = dialog.get_by_role("button", name="Unlock saved key")
    expect(unlock).to_be_visible()
    field = dialog.get_by_label("Passphrase of the saved key", exact=True)  # a visible label names it
    expect(field).to_be_visible()
    api_key = dialog.get_by_label("API key", exact=True).bounding_box()
    box, button = field.bounding_box(), unlock.bounding_box()
    assert abs(box["x"] - api_key["x"]) <= 1, (box, api_key)  # starts where the other fields start
    assert abs(button["x"] + button["width"] - (api_key["x"] + api_key["width"])) <= 1, (button, api_key)
    assert button["y"] < box["y"] + box["height"] and box["y"] < button["y"] + button["height"], (box, button)
    page.context.close()


# --- the model list ---------------------------------------------------------------------------------------

def test_the_top_bar_suggests_the_vendors_models_and_still_takes_any_name(browser: Browser, site_url: str,
                                                                         vendor: VendorReplay):
    vendor.list_models("gpt-4o-mini", "gpt-4.1", "o3-mini")
    page = new_page(browser, site_url, DESKTOP)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="ft:gpt-4o-mini:acme")
    model = page.get_by_role("combobox", name="Model for the next reply")
    expect(model).to_have_value("ft:gpt-4o-mini:acme")
    options = page.locator("#model-switch-list option")
    expect(options).to_have_count(4, timeout=REPLY_TIMEOUT_MS)
    values = sorted(options.evaluate_all("(options) => options.map((o) => o.value)"))
    assert values == ["ft:gpt-4o-mini:acme", "gpt-4.1", "gpt-4o-mini", "o3-mini"]  # the current one too
    assert any(r.method == "GET" and r.path == "/v1/models" for r in vendor.requests)
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in vendor.requests if r.method == "GET")

    # Free text still goes: a name the vendor did not list is the next reply's model.
    model.fill("my-own-model")
    model.press("Enter")
    expect(page.locator('#model-switch-list option[value="my-own-model"]')).to_have_count(1)  # now the current one
    vendor.script(TEXT_TURN)
    send(page, "Which model?")
    wait_idle(page)
    assert vendor.model_requests[-1].json["model"] == "my-own-model"
    page.context.close()


# --- the Focus panel --------------------------------------------------------------------------------------

def test_the_focus_panel_is_closed_at_first_and_remembered_once_opened(browser: Browser, site_url: str):
    page = new_page(browser, site_url, DESKTOP)
    close_first_run(page)
    toggle = page.get_by_role("button", name="Focus", exact=True)
    region = page.get_by_role("region", name="Focus memory")
    expect(region).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.click()
    expect(region).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    page.reload()
    wait_core(page)
    close_first_run(page)
    expect(region).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    toggle.click()
    expect(region).to_be_hidden()
    page.reload()
    wait_core(page)
    expect(region).to_be_hidden()
    page.context.close()


# --- the "Trust this server" switch ------------------------------------------------------------------------

@pytest.mark.parametrize(("viewport", "scheme"), [(DESKTOP, "light"), (PHONE, "dark")],
                         ids=["desktop-light", "phone-dark"])
def test_the_trust_switch_is_a_labelled_switch_inside_its_server_entry(
        browser: Browser, site_url: str, vendor: VendorReplay, viewport: dict[str, int], scheme: str):
    """The switch is drawn as a switch (a track wider than tall, no native box), sits on its own line
    inside the server's entry with its label on one line, and shows on and off in different colours."""
    page = new_page(browser, site_url, viewport, scheme)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    parts = site_url.split("/")
    with serve_tools(f"{parts[0]}//{parts[2]}", "A") as server:  # a real SDK server on loopback
        item = add_server(page, server.url)
        switch = item.get_by_role("checkbox", name=re.compile("^Trust "))
        expect(switch).to_be_visible()
        measure = """(input) => {
          const box = (el) => el.getBoundingClientRect();
          const label = input.closest('label'), entry = input.closest('li.server');
          const name = entry.querySelector('.server-head > :first-child');
          const style = getComputedStyle(input);
          return {track: box(input).toJSON(), label: box(label).toJSON(), entry: box(entry).toJSON(),
                  nameBottom: box(name).bottom, lineHeight: parseFloat(getComputedStyle(label).lineHeight) || 20,
                  appearance: style.appearance, background: style.backgroundColor, viewport: innerWidth};
        }"""
        off = switch.evaluate(measure)
        assert off["appearance"] == "none" and off["track"]["width"] > 1.5 * off["track"]["height"], off
        assert off["entry"]["left"] <= off["label"]["left"] and off["label"]["right"] <= off["entry"]["right"], off
        assert off["entry"]["right"] <= off["viewport"], off
        assert off["label"]["height"] < 2 * off["lineHeight"], f"the label wraps: {off}"
        assert off["label"]["top"] >= off["nameBottom"] - 1, f"the switch is not on its own line: {off}"
        item.get_by_text("Trust this server").click()  # the label toggles it, as a switch's label does
        expect(switch).to_be_checked()
        switch.evaluate("(el) => Promise.all(el.getAnimations().map((a) => a.finished))")  # the colour eases in
        on = switch.evaluate(measure)
        assert on["background"] != off["background"], (off, on)
    page.context.close()


# --- issue 29, item 14: phone and desktop, light and dark -----------------------------------------------------

FORMULA_REPLY = "The energy is $E = mc^2$ for a mass at rest."
# Boxes of what item 14 is about, read in the page.
MEASURE = """() => {
  const box = (el) => el.getBoundingClientRect().toJSON();
  const shown = (el) => el.getClientRects().length > 0 && el.getBoundingClientRect().width > 1;
  const textWidth = (el, text) => {
    const probe = document.createElement('span');
    probe.style.cssText = 'position:absolute;visibility:hidden;white-space:pre';
    probe.style.font = getComputedStyle(el).font;
    probe.textContent = text;
    document.body.append(probe);
    const width = probe.getBoundingClientRect().width;
    probe.remove();
    return width;
  };
  const profile = document.getElementById('profile-switch'), model = document.getElementById('model-switch');
  const math = document.querySelector('.transcript math'), para = math.closest('p');
  return {
    viewport: {width: innerWidth, height: innerHeight},
    topbar: box(document.querySelector('.topbar')), composer: box(document.getElementById('composer')),
    profile: {box: box(profile), text: textWidth(profile, profile.selectedOptions[0].textContent)},
    model: {box: box(model), cut: model.scrollWidth > model.clientWidth},
    labels: ['toggle-focus', 'open-tools', 'open-settings'].map((id) => {
      const label = document.querySelector('#' + id + ' .top-label');
      return {id, shown: shown(label), box: box(label)};
    }),
    mathSize: parseFloat(getComputedStyle(math).fontSize), bodySize: parseFloat(getComputedStyle(para).fontSize),
  };
}"""


def overlap_vertically(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_layout_of_the_top_bar_composer_chat_settings_edit_box_drawer_and_formulas(
        browser: Browser, site_url: str, vendor: VendorReplay, viewport: dict[str, int], scheme: str):
    name = f"{'phone' if viewport is PHONE else 'desktop'}-{scheme}"
    page = new_page(browser, site_url, viewport, scheme)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    reply_with(vendor, FORMULA_REPLY)
    send(page, "What is the energy of a mass at rest? " * 6)
    wait_idle(page)
    expect(last_reply(page).locator("math")).to_have_count(1)
    found = page.evaluate(MEASURE)
    page.screenshot(path=f"/tmp/h4-{name}-chat.png")
    assert found["mathSize"] == found["bodySize"], f"the formula is not at body size: {found}"
    if viewport is PHONE:
        assert found["composer"]["height"] < 130, f"the composer is too tall: {found['composer']}"
        profile = found["profile"]  # its name, and room for the select's arrow
        assert profile["box"]["width"] >= profile["text"] + 20, f"the profile is cut: {profile}"
        assert not found["model"]["cut"], f"the model's name is cut: {found['model']}"
        assert all(label["shown"] and label["box"]["right"] <= found["viewport"]["width"]
                   for label in found["labels"]), f"Focus, Tools, Settings show no label: {found['labels']}"
        # The drawer has a backdrop over the chat; a tap on it puts the drawer away.
        page.get_by_role("button", name="Show conversations", exact=True).click()
        expect(page.locator("#sidebar")).to_be_visible()
        page.locator("#sidebar").evaluate("(el) => Promise.all(el.getAnimations().map((a) => a.finished))")
        x, y = viewport["width"] - 20, viewport["height"] // 2
        backdrop = page.evaluate(f"""() => {{
          const el = document.elementFromPoint({x}, {y});
          return {{id: el.id || el.className, colour: getComputedStyle(el, '::after').backgroundColor,
                   own: getComputedStyle(el).backgroundColor}};
        }}""")
        page.screenshot(path=f"/tmp/h4-{name}-drawer.png")
        colours = [parse_rgb(c)[1] for c in (backdrop["colour"], backdrop["own"]) if c.startswith("rgb")]
        assert any(0 < alpha < 1 for alpha in colours), f"no backdrop beside the drawer: {backdrop}"
        page.mouse.click(x, y)
        expect(page.locator("#sidebar")).to_be_hidden()

    # Chat settings: the Code interpreter checkbox sits beside its label.
    page.get_by_role("button", name="Chat settings").click()
    box = page.get_by_role("checkbox", name="Code interpreter").bounding_box()
    label = page.locator("#chat-settings").get_by_text("Code interpreter", exact=True).last.bounding_box()
    page.screenshot(path=f"/tmp/h4-{name}-settings.png")
    assert box and label and overlap_vertically(box, label) and label["x"] >= box["x"] + box["width"], (box, label)
    page.get_by_role("button", name="Chat settings").click()

    # Editing a message: the edit box stays below the top bar, and the top bar stays on screen.
    page.locator(".transcript li.msg.user").get_by_role("button", name="Edit", exact=True).click()
    field = page.get_by_role("textbox", name="Edit message")
    expect(field).to_be_focused()
    edit = field.bounding_box()
    bar = page.locator(".topbar").bounding_box()
    page.screenshot(path=f"/tmp/h4-{name}-edit.png")
    assert edit and bar and bar["y"] >= 0 and edit["y"] >= bar["y"] + bar["height"], (edit, bar)
    page.context.close()


# --- what the screenshots showed (issue 29, "How to show it"; docs/screenshots.py) ----------------------------

LONG_PROFILE, LONG_MODEL = "OpenRouter · openai/gpt-4o-mini", "openai/gpt-4o-mini"
TABLE_REPLY = "| Algorithm | Average | Worst | Stable |\n|---|---|---|---|\n| Quicksort | fast | slow | no |\n"
# How many lines a box's own text takes, and what does not fit, read in the page.
BAR_TOPS = ("() => [...document.querySelector('.topbar').children].filter((el) => el.getClientRects().length)"
            ".map((el) => Math.round(el.getBoundingClientRect().top))")
LINES = "(el) => { const r = document.createRange(); r.selectNodeContents(el); return r.getClientRects().length; }"
FITS = """() => {
  const box = (el) => el.getBoundingClientRect().toJSON();
  const lines = """ + LINES + """;
  const row = document.querySelector('.conversations li[data-id]');
  const chip = document.querySelector('#attachments .attachment.document');
  const [name, size] = chip.querySelectorAll(':scope > span');
  const image = document.querySelector('#attachments img');
  return {
    barTops: (""" + BAR_TOPS + """)(),
    icons: ['pin', 'folder'].map((kind) => getComputedStyle(row.querySelector('.' + kind), '::before').maskImage),
    chip: {height: box(chip).height, gap: box(size).left - box(name).right},
    imageRemove: {button: box(image.parentElement.querySelector('button')), image: box(image)},
    headerLines: [...document.querySelectorAll('.transcript th')].map(lines),
  };
}"""


def one_row(tops: list[int], problems: list[str]) -> None:
    if max(tops) - min(tops) > 20:  # the controls of one row differ in height, not by a row
        problems.append(f"the top bar takes two rows: {tops}")


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


def test_at_desktop_names_icons_chips_and_japanese_buttons_are_not_cut(browser: Browser, site_url: str,
                                                                         vendor: VendorReplay):
    """What the screenshots showed at 1280x800: the profile's name cut in a top bar with room to spare, a
    conversation's pin and folder buttons drawn as boxes where no font has their emoji, a file chip with its
    name and size run together and as tall as a thumbnail, an image's × beside it instead of on it, and
    "エクスポート" broken over two lines."""
    page = new_page(browser, site_url, DESKTOP)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model=LONG_MODEL, name=LONG_PROFILE)
    reply_with(vendor, TABLE_REPLY)
    send(page, "Compare quicksort, merge sort and insertion sort")
    wait_idle(page)
    box = page.get_by_role("textbox", name="Message", exact=True)
    box.evaluate(PASTE, data_transfer(page, a_file(ROOT / "web" / "icons" / "icon-192.png", "image/png")))
    box.evaluate(PASTE, data_transfer(page, a_file(DOCUMENTS / "sales.csv", "text/csv")))
    expect(page.locator("#attachments .attachment")).to_have_count(2)
    page.mouse.move(DESKTOP["width"] / 2, DESKTOP["height"] / 3)  # over the chat: no row is pointed at
    page.locator("#transcript").focus()
    found = page.evaluate(FITS)
    problems = []
    one_row(found["barTops"], problems)
    if not all(icon.startswith('url("data:image/svg') for icon in found["icons"]):
        problems.append(f"pin and folder are characters a font may lack: {found['icons']}")
    if found["chip"]["height"] > 40 or found["chip"]["gap"] < 4:
        problems.append(f"the file chip: {found['chip']}")
    if not overlap(found["imageRemove"]["button"], found["imageRemove"]["image"]):
        problems.append(f"the image's × is not on it: {found['imageRemove']}")
    open_settings(page).get_by_label("Language").select_option("ja")
    page.get_by_role("dialog", name="設定").get_by_role("button", name="閉じる").click()
    one_row(page.evaluate(BAR_TOPS), problems)
    lines = page.get_by_role("button", name="エクスポート", exact=True).evaluate(LINES)
    if lines != 1:
        problems.append(f"エクスポート takes {lines} lines")
    assert not problems, "\n".join(problems)
    page.context.close()


def test_at_phone_width_a_tables_header_words_are_whole(browser: Browser, site_url: str, vendor: VendorReplay):
    """A table wider than a phone scrolls inside its box; its words are not broken letter by letter to fit
    ("Averag/e")."""
    page = new_page(browser, site_url, PHONE)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    reply_with(vendor, TABLE_REPLY.replace("fast", "fast on average, slow on sorted input"))
    send(page, "Compare quicksort, merge sort and insertion sort")
    wait_idle(page)
    headers = page.locator(".transcript th")
    expect(headers).to_have_count(4)
    assert headers.evaluate_all(f"(all) => all.map({LINES})") == [1, 1, 1, 1]
    page.context.close()
