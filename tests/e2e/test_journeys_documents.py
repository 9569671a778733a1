"""Documents: "Attach" takes text files and PDFs as well as images. A CSV reaches the vendor as text under its
name; a PDF goes as the file itself to a vendor that reads PDF (Anthropic) and as the text pdf.js extracted
from it to one that does not (Ollama), so the conversation continues there; what cannot be attached says why
and what to do; a reload and an export keep the files, whose bytes live in OPFS."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from journeys import REPLY_TIMEOUT_MS, configure, last_reply, open_app, send, stored_user_parts, wait_idle
from playwright.sync_api import Browser, Page, expect
from vendor_replay import VendorReplay, expected

pytestmark = pytest.mark.e2e

DOCUMENTS = Path(__file__).resolve().parents[1] / "fixtures" / "documents"
KEY = "sk-ant-documents-test-7f6e5d4c"
SALES_CHIP = f"📄 sales.csv {(DOCUMENTS / 'sales.csv').stat().st_size} B×"  # name, size, and its Remove button


def attach(page: Page, *paths: Path) -> None:
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Attach", exact=True).click()
    chooser.value.set_files([str(p) for p in paths])


def test_a_csv_and_a_pdf_reach_each_vendor_in_the_form_it_reads(browser: Browser, site_url: str,
                                                                 vendor: VendorReplay, tmp_path: Path):
    vendor.script("anthropic/stream-text", "ollama/chat-stream-text", "anthropic/stream-text")
    page = open_app(browser, site_url)
    configure(page, vendor="anthropic", base=vendor.url, key=KEY, model="claude-sonnet-4-5", name="Claude")
    attach(page, DOCUMENTS / "sales.csv", DOCUMENTS / "sample.pdf")
    chips = page.locator("#attachments .attachment.document")
    expect(chips).to_have_count(2, timeout=30_000)  # the PDF waits for pdf.js, fetched now for the first time
    expect(chips.nth(1)).to_contain_text("sample.pdf")
    send(page, "Which city sold most, and does the report agree?")
    wait_idle(page)

    blocks = vendor.model_requests[-1].json["messages"][0]["content"]
    assert [b["type"] for b in blocks] == ["text", "text", "document"]
    assert blocks[1]["text"] == ('<file name="sales.csv" type="text/csv">\n'
                                 + (DOCUMENTS / "sales.csv").read_text("utf-8") + "\n</file>")
    assert blocks[2]["title"] == "sample.pdf" and blocks[2]["source"]["media_type"] == "application/pdf"
    assert base64.b64decode(blocks[2]["source"]["data"]) == (DOCUMENTS / "sample.pdf").read_bytes()
    sent = page.locator(".transcript li.msg.user").first.locator(".files .file")
    expect(sent).to_have_text(["📄 sales.csv", "📄 sample.pdf"])

    # The same conversation continues on Ollama, which reads no PDF: it gets the text pdf.js extracted.
    configure(page, vendor="ollama", base=vendor.url, key="", model="llama3.2", name="Local", new_profile=True)
    send(page, "And in one sentence?")
    wait_idle(page)
    first = vendor.model_requests[-1].json["messages"][0]["content"]
    assert '<file name="sample.pdf" type="application/pdf">\nQuarterly sales report' in first
    assert "Total revenue: 4,210 units in Q3" in first and "Osaka,1200" in first

    # The PDF's bytes are in OPFS; IndexedDB holds the part without them (its text and a reference).
    stored = stored_user_parts(page)
    pdf_record = next(p for p in stored if p["type"] == "document" and p["name"] == "sample.pdf")
    assert "data" not in pdf_record and pdf_record["blob"].startswith("sha256-")
    assert pdf_record["size"] == (DOCUMENTS / "sample.pdf").stat().st_size
    assert pdf_record["text"].startswith("Quarterly sales report")

    # A reload keeps the files with the message; the conversation goes back to a PDF-reading vendor with the
    # file itself, read back from OPFS; the export carries them.
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-ui", "ready", timeout=REPLY_TIMEOUT_MS)
    page.locator(".sidebar").get_by_text("Which city sold most").first.click()
    expect(page.locator(".transcript li.msg.user").first.locator(".files .file")).to_have_count(2)
    configure(page, vendor="anthropic", base=vendor.url, key=KEY, model="claude-sonnet-4-5", name="Claude again",
              new_profile=True)
    send(page, "Thanks.")
    wait_idle(page)
    again = vendor.model_requests[-1].json["messages"][0]["content"]
    assert base64.b64decode(again[2]["source"]["data"]) == (DOCUMENTS / "sample.pdf").read_bytes()
    page.get_by_role("button", name="Export", exact=True).click()
    with page.expect_download() as download:
        page.get_by_role("button", name="This conversation (JSON)").click()
    exported = tmp_path / "export.json"
    download.value.save_as(exported)
    data = json.loads(exported.read_text("utf-8"))
    parts = data["conversations"][0]["messages"][0]["parts"]
    pdf = next(p for p in parts if p["type"] == "document" and p["name"] == "sample.pdf")
    assert base64.b64decode(pdf["data"]) == (DOCUMENTS / "sample.pdf").read_bytes()
    assert pdf["text"].startswith("Quarterly sales report") and KEY not in exported.read_text("utf-8")


def test_what_cannot_be_attached_says_why_and_the_rest_is_still_attached(browser: Browser, site_url: str,
                                                                          vendor: VendorReplay, tmp_path: Path):
    page = open_app(browser, site_url)
    configure(page, vendor="anthropic", base=vendor.url, key=KEY, model="claude-sonnet-4-5")
    binary = tmp_path / "archive.zip"
    binary.write_bytes(b"PK\x03\x04" + bytes(range(256)))
    latin1 = tmp_path / "notes.txt"
    latin1.write_bytes("café au lait".encode("latin-1"))
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nthis is not really a PDF")
    attach(page, binary, latin1, broken, DOCUMENTS / "sales.csv")
    errors = page.locator(".toast.error")
    expect(errors.filter(has_text="archive.zip")).to_contain_text("cannot be attached. Attach an image, a PDF")
    expect(errors.filter(has_text="notes.txt")).to_contain_text("is not UTF-8 text. Save it as UTF-8")
    expect(errors.filter(has_text="broken.pdf")).to_contain_text("not a readable PDF", timeout=30_000)
    expect(page.locator("#attachments .attachment.document")).to_have_text([SALES_CHIP])


# A DataTransfer as the browser builds one for a paste or a drop: files (a wide PNG drawn on a canvas, or the
# bytes given) and text.
DATA_TRANSFER = """async (items) => {
  const dt = new DataTransfer();
  for (const item of items) {
    if (item.text !== undefined) { dt.setData("text/plain", item.text); continue; }
    let blob;
    if (item.canvas) {
      const canvas = Object.assign(document.createElement("canvas"), {width: item.canvas[0], height: item.canvas[1]});
      const g = canvas.getContext("2d"); g.fillStyle = "#2e7d32"; g.fillRect(0, 0, canvas.width, canvas.height);
      blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
    } else {
      blob = new Blob([Uint8Array.from(atob(item.base64), (c) => c.charCodeAt(0))], {type: item.type});
    }
    dt.items.add(new File([blob], item.name, {type: item.type}));
  }
  return dt;
}"""
PASTE = """(box, dt) => box.dispatchEvent(new ClipboardEvent("paste",
  {clipboardData: dt, bubbles: true, cancelable: true}))"""


def data_transfer(page: Page, *items: dict):
    return page.evaluate_handle(DATA_TRANSFER, list(items))


def a_file(path: Path, mime: str) -> dict:
    return {"name": path.name, "type": mime, "base64": base64.b64encode(path.read_bytes()).decode()}


def test_files_pasted_into_the_box_or_dropped_on_the_chat_are_attached(browser: Browser, site_url: str,
                                                                       vendor: VendorReplay):
    vendor.script("anthropic/stream-text")
    page = open_app(browser, site_url)
    configure(page, vendor="anthropic", base=vendor.url, key=KEY, model="claude-sonnet-4-5")
    box = page.get_by_role("textbox", name="Message", exact=True)
    box.fill("Compare these.")

    # A screenshot pasted into the box: a thumbnail of a sensible size before sending, the words kept.
    box.evaluate(PASTE, data_transfer(page, {"name": "image.png", "type": "image/png", "canvas": [480, 120]}))
    thumb = page.locator("#attachments img")
    expect(thumb).to_have_attribute("alt", "image.png")
    size = thumb.bounding_box()
    assert size and 56 <= size["height"] <= 72 and size["width"] <= 72, f"thumbnail {size}"
    expect(box).to_have_value("Compare these.")

    # Files dragged over the chat show the drop zone; leaving hides it; a drop attaches them.
    transcript, zone = page.locator("#transcript"), page.locator(".drop-zone")
    files = data_transfer(page, a_file(DOCUMENTS / "sales.csv", "text/csv"))
    transcript.dispatch_event("dragenter", {"dataTransfer": files})
    transcript.dispatch_event("dragover", {"dataTransfer": files})
    expect(zone).to_be_visible()
    expect(zone).to_contain_text("Drop files here to attach them")
    transcript.dispatch_event("dragleave", {"dataTransfer": files})
    expect(zone).to_be_hidden()
    transcript.dispatch_event("dragenter", {"dataTransfer": files})
    expect(zone).to_be_visible()
    transcript.dispatch_event("drop", {"dataTransfer": files})
    expect(zone).to_be_hidden()
    chip = page.locator("#attachments .attachment.document")
    expect(chip).to_have_text(SALES_CHIP)  # its name and size

    # Dragged text is not a file: no drop zone, nothing attached.
    text = data_transfer(page, {"text": "just words"})
    transcript.dispatch_event("dragenter", {"dataTransfer": text})
    expect(zone).to_be_hidden()
    transcript.dispatch_event("drop", {"dataTransfer": text})
    expect(page.locator("#attachments .attachment")).to_have_count(2)
    # Files dropped beside the chat (the sidebar) are refused, not opened by the browser in place of the app.
    refused = page.locator(".sidebar").evaluate("""(el, dt) => !el.dispatchEvent(new DragEvent("drop",
        {dataTransfer: dt, bubbles: true, cancelable: true}))""", files)
    assert refused
    expect(page.locator("#attachments .attachment")).to_have_count(2)

    # A pasted file goes through the same limits and refusals as "Attach": refused with the reason, the rest kept.
    box.evaluate(PASTE, data_transfer(page, {"name": "archive.zip", "type": "application/zip", "base64": "UEsDBA=="}))
    expect(page.locator(".toast.error").filter(has_text="archive.zip")).to_contain_text("cannot be attached")
    expect(page.locator("#attachments .attachment")).to_have_count(2)

    box.press("Enter")
    expect(last_reply(page).locator(".content")).to_have_text(expected("anthropic/stream-text")["text"],
                                                              timeout=REPLY_TIMEOUT_MS)
    expect(page.locator("#attachments .attachment")).to_have_count(0)  # stored with the message, so cleared
    blocks = vendor.model_requests[-1].json["messages"][0]["content"]
    kinds = [b["type"] for b in blocks]
    assert kinds.count("image") == 1 and any(b.get("text", "").startswith('<file name="sales.csv"') for b in blocks)
