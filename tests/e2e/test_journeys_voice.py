"""Voice (issue #35.3), in Chromium with a fake microphone: Chromium's ``--use-fake-device-for-media-stream`` plays
a WAV file (``--use-file-for-fake-audio-capture``: the recorded speech fixture, a 440 Hz tone) into getUserMedia, and
``--use-fake-ui-for-media-stream`` grants the microphone as a user's click on "Allow" does.

Headless Chromium has a SpeechRecognition that cannot work (no speech service: it fails at once, "audio-capture" here,
"network" in Chromium builds without Google's keys), so dictation shows its fallback: the page records the microphone
and the core sends the clip to the vendor's transcription (replayed by vendor_replay from the documented format). It
has no speech synthesis voice either, so "Read aloud" with the browser's voice must say so; with the vendor's voice
it plays the vendor's audio until Stop. Nothing in the page is stubbed.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator

import pytest
from conftest import CHROMIUM, CHROMIUM_ARGS
from journeys import (
    REPLY_TIMEOUT_MS,
    configure,
    export_conversation,
    last_reply,
    open_app,
    open_settings,
    send,
    stored_user_parts,
    wait_idle,
)
from playwright.sync_api import Browser, Page, Playwright, expect
from vendor_replay import FIXTURES, VendorReplay, expected

pytestmark = pytest.mark.e2e

SPEECH = FIXTURES / "openai" / "audio-speech.wav"
KEY = "sk-proj-voice-test-5e4d3c2b1a"
TRANSCRIPT = expected("openai/audio-transcription")["text"]


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """This module's Chromium: the usual one, with a fake microphone playing the speech fixture."""
    media = ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
             f"--use-file-for-fake-audio-capture={SPEECH}"]
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + media)
    yield browser
    browser.close()


def openai_app(browser: Browser, site_url: str, vendor: VendorReplay) -> Page:
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    return page


def record(page: Page, status: str, button: str | None = None) -> None:
    """Press ``button`` (if given), see it record (its Stop, and the status line counting the time), then press its
    Stop."""
    if button:
        page.get_by_role("button", name=button, exact=True).click()
    line = page.locator("#voice-status")
    expect(line).to_contain_text(status)
    expect(line).to_contain_text("0:01")  # a second of the fake microphone recorded
    stop = page.locator("button[aria-pressed=true][data-state=recording]")
    expect(stop).to_have_text("■ Stop")
    stop.click()


def multipart_file(body: bytes) -> bytes:
    """The bytes of the ``file`` field of a multipart/form-data body."""
    _, _, rest = body.partition(b'name="file"')
    return rest.split(b"\r\n\r\n", 1)[1].rsplit(b"\r\n--", 1)[0]


def test_dictation_falls_back_to_the_vendors_transcription_and_the_words_wait_in_the_box(
        browser: Browser, site_url: str, vendor: VendorReplay):
    vendor.script("openai/audio-transcription")
    page = openai_app(browser, site_url, vendor)
    box = page.get_by_role("textbox", name="Message", exact=True)
    box.fill("Note:")
    page.get_by_role("button", name="Dictate", exact=True).click()
    # The browser's own recognition fails here; the page says so and records for OpenAI's transcription.
    expect(page.locator(".toast")).to_contain_text("This browser's speech recognition is not available")
    record(page, "Recording for OpenAI's transcription")
    expect(box).to_have_value(f"Note: {TRANSCRIPT}", timeout=REPLY_TIMEOUT_MS)
    expect(page.locator("#voice-status")).to_be_hidden()
    expect(page.get_by_role("button", name="Dictate", exact=True)).to_have_attribute("aria-pressed", "false")

    sent = vendor.model_requests
    assert [r.path for r in sent] == ["/v1/audio/transcriptions"]  # transcribed, and nothing sent by itself
    assert sent[0].headers["authorization"] == f"Bearer {KEY}"
    wav = multipart_file(sent[0].body)
    assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE" and len(wav) > 16_000  # over half a second at 16 kHz
    assert b'name="model"\r\n\r\ngpt-4o-mini-transcribe' in sent[0].body


def test_a_recorded_clip_goes_with_the_message_survives_a_reload_and_a_vendor_without_audio_refuses_it(
        browser: Browser, site_url: str, vendor: VendorReplay):
    vendor.script("openai/chat-stream-text-usage")
    page = openai_app(browser, site_url, vendor)
    record(page, "Recording a clip", "Record a clip")
    chip = page.locator("#attachments .attachment.document")
    expect(chip).to_contain_text(re.compile(r"🎤 clip-\d{8}-\d{6}\.wav"), timeout=REPLY_TIMEOUT_MS)
    name = chip.locator("span").first.inner_text().removeprefix("🎤 ")
    send(page, "What do I say here?")
    wait_idle(page)

    content = vendor.model_requests[-1].json["messages"][0]["content"]
    assert [c["type"] for c in content] == ["text", "input_audio"] and content[1]["input_audio"]["format"] == "wav"
    clip = base64.b64decode(content[1]["input_audio"]["data"])
    assert clip[:4] == b"RIFF" and len(clip) > 16_000
    stored = next(p for p in stored_user_parts(page) if p["type"] == "document")
    assert stored["name"] == name and stored["mime_type"] == "audio/wav" and stored["blob"].startswith("sha256-")
    assert "data" not in stored and stored["size"] == len(clip)  # the bytes are in OPFS

    page.reload()
    expect(page.locator("html")).to_have_attribute("data-ui", "ready", timeout=REPLY_TIMEOUT_MS)
    page.locator(".sidebar").get_by_text("What do I say here?").first.click()
    sent_clip = page.locator(".transcript li.msg.user").first.locator(".files .file.audio")
    expect(sent_clip).to_contain_text(f"🎤 {name}")
    sent_clip.get_by_role("button", name=f"Play {name}").click()
    expect(sent_clip.locator("audio")).to_have_count(1)  # its own bytes, read back from OPFS, are audio

    exported = export_conversation(page)["conversations"][0]["messages"][0]["parts"]
    assert base64.b64decode(next(p for p in exported if p["type"] == "document")["data"]) == clip

    configure(page, vendor="anthropic", base=vendor.url, key="sk-ant-voice-test-1234", model="claude-sonnet-4-5",
              name="Claude", new_profile=True)
    asked = len(vendor.model_requests)
    send(page, "And you, Claude?")
    wait_idle(page)
    expect(last_reply(page)).to_contain_text(f"Anthropic: {name} is an audio clip, and this vendor does not take audio")
    assert len(vendor.model_requests) == asked  # refused before anything went out


def test_read_aloud_says_when_the_browser_has_no_voice_and_plays_the_vendors_until_stop(
        browser: Browser, site_url: str, vendor: VendorReplay):
    vendor.script("openai/chat-stream-text-usage", "openai/audio-speech")
    page = openai_app(browser, site_url, vendor)
    send(page, "Say something.")
    wait_idle(page)
    read = last_reply(page).get_by_role("button", name="Read aloud")
    read.click()
    expect(page.locator(".toast.error")).to_contain_text("This browser has no voice to read with")
    expect(read).to_have_attribute("aria-pressed", "false")

    dialog = open_settings(page)
    dialog.get_by_label("Read aloud with").select_option("vendor")
    dialog.get_by_label("Speed").fill("1.25")
    dialog.get_by_label("Speed").press("Tab")
    dialog.get_by_role("button", name="Close", exact=True).click()
    read.click()
    stop = last_reply(page).get_by_role("button", name="Stop reading")
    expect(stop).to_have_attribute("aria-pressed", "true")
    expect(stop).to_have_attribute("data-state", "playing", timeout=REPLY_TIMEOUT_MS)  # the vendor's 3 s of audio
    speech = vendor.model_requests[-1]
    assert speech.path == "/v1/audio/speech" and speech.headers["authorization"] == f"Bearer {KEY}"
    assert speech.json == {"model": "gpt-4o-mini-tts", "input": expected("openai/chat-stream-text-usage")["text"],
                           "voice": "alloy", "speed": 1.25, "response_format": "wav"}
    stop.click()
    expect(last_reply(page).get_by_role("button", name="Read aloud")).to_have_attribute("aria-pressed", "false")


def test_conversation_mode_reads_the_reply_as_it_streams_then_listens_again(
        browser: Browser, site_url: str, vendor: VendorReplay):
    vendor.script("openai/chat-stream-text-usage", "openai/audio-speech")
    page = openai_app(browser, site_url, vendor)
    dialog = open_settings(page)
    dialog.get_by_label("Read aloud with").select_option("vendor")
    dialog.get_by_role("button", name="Close", exact=True).click()
    mode = page.get_by_role("button", name="Conversation mode")
    mode.click()
    expect(mode).to_have_attribute("aria-pressed", "true")
    send(page, "Which is the capital of the UK?")
    wait_idle(page)
    # Once the reply is read (the vendor's 3 s of audio), the microphone listens again: the browser's recognition
    # fails here, so it records for OpenAI's transcription, and says so.
    status = page.locator("#voice-status")
    expect(status).to_contain_text("Recording for OpenAI's transcription", timeout=REPLY_TIMEOUT_MS)
    assert [r.path for r in vendor.model_requests] == ["/v1/chat/completions", "/v1/audio/speech"]
    assert vendor.model_requests[1].json["input"] == expected("openai/chat-stream-text-usage")["text"]
    expect(page.get_by_role("button", name="Stop dictation")).to_have_attribute("aria-pressed", "true")
    mode.click()  # off: the microphone is let go, and what it heard is not sent anywhere
    expect(status).to_be_hidden()
    expect(mode).to_have_attribute("aria-pressed", "false")
    expect(page.get_by_role("button", name="Dictate")).to_be_enabled()
    assert len(vendor.model_requests) == 2
