"""Voice through the adapters: audio clips in a conversation, speech to text and text to speech (issue #35.3).

An audio clip is a document part with an ``audio/*`` type: OpenAI Chat takes it as ``input_audio`` and Gemini as
``inlineData``; every other vendor refuses it with an error naming that vendor, never silently dropping it.
Transcription and speech go through the same client and key rules as chat, against the recordings built from the
vendors' documented formats (tests/fixtures/vendors, api ``audio.*``). Runs in Pyodide too.
"""

from __future__ import annotations

import base64
import json
import re

import pytest
from vendor_fixtures import fixture, no_sleep

from pycore.adapters import get_adapter
from pycore.client import ChatClient
from pycore.exceptions import AuthenticationError, UnsupportedContentError
from pycore.http.replay import Recording, ReplayTransport
from pycore.messages import ChatRequest, DocumentPart, Message, TextPart

pytestmark = pytest.mark.pyodide

KEY = "sk-proj-audio-SECRETSECRET"
WAV = fixture("openai/audio-speech.wav").body()
CLIP = DocumentPart(name="voice-note.wav", mime_type="audio/wav", data=WAV)
REQUEST = ChatRequest(model="gpt-4o-audio-preview",
                      messages=[Message(role="user", parts=[TextPart(text="What do I say?"), CLIP])])


def body_of(vendor: str, request: ChatRequest = REQUEST, **kwargs: str) -> dict:
    return json.loads(get_adapter(vendor, api_key=KEY, **kwargs).build_request(request).body or b"{}")


def test_openai_chat_gets_the_clip_as_input_audio() -> None:
    content = body_of("openai")["messages"][0]["content"]
    audio = {"data": base64.b64encode(WAV).decode(), "format": "wav"}
    assert content[1] == {"type": "input_audio", "input_audio": audio}


def test_openai_chosen_behind_a_proxy_still_gets_the_clip() -> None:
    """A clip has no text to fall back on: a profile the user set up as OpenAI itself, at a proxy's address (a
    company gateway, the tests' replay server), is believed; only an OpenAI-compatible choice is refused."""
    adapter = get_adapter("openai", api_key=KEY, base_url="http://127.0.0.1:8080/v1")
    adapter.chosen = "openai"
    content = json.loads(adapter.build_request(REQUEST).body or b"{}")["messages"][0]["content"]
    assert content[1]["type"] == "input_audio"
    adapter.chosen = "openai-compatible"
    with pytest.raises(UnsupportedContentError, match="^the OpenAI-compatible server at 127.0.0.1: voice-note.wav"):
        adapter.build_request(REQUEST)


def test_an_mp3_clip_says_mp3_to_openai() -> None:
    mp3 = ChatRequest(model="m", messages=[Message(role="user", parts=[
        DocumentPart(name="a.mp3", mime_type="audio/mpeg", data=b"ID3")])])
    assert body_of("openai", mp3)["messages"][0]["content"][0]["input_audio"]["format"] == "mp3"


def test_gemini_gets_the_clip_inline() -> None:
    parts = body_of("gemini")["contents"][0]["parts"]
    assert {"inlineData": {"mimeType": "audio/wav", "data": base64.b64encode(WAV).decode()}} in parts


@pytest.mark.parametrize(("vendor", "named"), [("anthropic", "Anthropic"), ("ollama", "Ollama"),
                                               ("openai-responses", "OpenAI Responses")])
def test_a_vendor_without_audio_refuses_the_clip_naming_itself(vendor: str, named: str) -> None:
    with pytest.raises(UnsupportedContentError) as refused:
        get_adapter(vendor, api_key=KEY).build_request(REQUEST)
    refusal = f"{named}: voice-note.wav is an audio clip, and this vendor does not take audio"
    assert str(refused.value).startswith(refusal)
    assert "(OpenAI, Gemini)" in str(refused.value)


def test_an_openai_compatible_server_refuses_the_clip_naming_its_host() -> None:
    named = r"^the OpenAI-compatible server at api\.groq\.com: voice-note\.wav is an audio clip"
    with pytest.raises(UnsupportedContentError, match=named):
        get_adapter("openai", api_key=KEY, base_url="https://api.groq.com/openai/v1").build_request(REQUEST)


def _client(vendor: str, *recordings: Recording) -> tuple[ChatClient, ReplayTransport]:
    transport = ReplayTransport(list(recordings))
    return ChatClient(get_adapter(vendor, api_key=KEY), transport, sleep=no_sleep), transport


def _multipart_fields(body: bytes, content_type: str) -> dict[str, bytes]:
    boundary = re.search(r"boundary=(\S+)", content_type)
    assert boundary
    fields = {}
    for chunk in body.split(b"--" + boundary.group(1).encode())[1:-1]:
        head, _, value = chunk.removeprefix(b"\r\n").partition(b"\r\n\r\n")
        name = re.search(rb'name="([^"]+)"', head)
        assert name
        fields[name.group(1).decode()] = value.removesuffix(b"\r\n")
    return fields


async def test_openai_transcribes_the_clip_with_its_transcription_model() -> None:
    recorded = fixture("openai/audio-transcription.json")
    client, transport = _client("openai", Recording(recorded.body(), content_type=recorded.content_type))
    text = await client.transcribe(WAV, "audio/wav", chat_model="gpt-4o-mini", language="en")
    assert text == recorded.expected()["text"]
    sent = transport.requests[0]
    assert sent.url == "https://api.openai.com/v1/audio/transcriptions"
    assert sent.headers["authorization"] == f"Bearer {KEY}" and KEY not in sent.url
    fields = _multipart_fields(sent.body or b"", sent.headers["content-type"])
    assert fields["file"] == WAV and fields["model"] == b"gpt-4o-mini-transcribe" and fields["language"] == b"en"
    assert b'filename="speech.wav"' in (sent.body or b"") and b"Content-Type: audio/wav" in (sent.body or b"")


async def test_openai_speaks_with_the_voice_and_speed_asked() -> None:
    recorded = fixture("openai/audio-speech.wav")
    client, transport = _client("openai", Recording(recorded.body(), content_type=recorded.content_type))
    audio, mime_type = await client.speak("Hello there.", voice="coral", speed=1.25)
    assert (audio, mime_type) == (WAV, "audio/wav")
    sent = transport.requests[0]
    assert sent.url == "https://api.openai.com/v1/audio/speech"
    assert json.loads(sent.body or b"") == {"model": "gpt-4o-mini-tts", "input": "Hello there.", "voice": "coral",
                                            "speed": 1.25, "response_format": "wav"}


async def test_a_transcription_refused_for_the_key_is_the_vendors_typed_error_without_the_key() -> None:
    recorded = fixture("openai/error-401-invalid-api-key.json")
    client, _ = _client("openai", Recording(recorded.body(), status=401, content_type=recorded.content_type))
    with pytest.raises(AuthenticationError) as refused:
        await client.transcribe(WAV, "audio/wav", chat_model="gpt-4o-mini")
    assert KEY not in str(refused.value)


async def test_gemini_transcribes_with_the_chat_model_reading_the_audio() -> None:
    recorded = fixture("gemini/nonstream-text.json")
    client, transport = _client("gemini", Recording(recorded.body(), content_type=recorded.content_type))
    text = await client.transcribe(WAV, "audio/wav", chat_model="gemini-2.5-flash")
    assert text == recorded.expected()["text"]
    sent = transport.requests[0]
    assert sent.url.endswith("/models/gemini-2.5-flash:generateContent")
    parts = json.loads(sent.body or b"")["contents"][0]["parts"]
    assert parts[0]["text"].startswith("Transcribe")
    assert parts[1] == {"inlineData": {"mimeType": "audio/wav", "data": base64.b64encode(WAV).decode()}}


@pytest.mark.parametrize(("vendor", "named"), [("anthropic", "Anthropic"), ("ollama", "Ollama")])
async def test_a_vendor_without_speech_apis_says_so_by_name(vendor: str, named: str) -> None:
    client, transport = _client(vendor, Recording(b"{}"))
    with pytest.raises(UnsupportedContentError, match=f"^{named} has no speech-to-text"):
        await client.transcribe(WAV, "audio/wav", chat_model="m")
    with pytest.raises(UnsupportedContentError, match=f"^{named} has no text-to-speech"):
        await client.speak("Hi.")
    assert transport.requests == []


async def test_gemini_speaks_through_its_tts_model_and_the_pcm_comes_back_as_wav() -> None:
    recorded = fixture("gemini/audio-speech.json")
    client, transport = _client("gemini", Recording(recorded.body(), content_type=recorded.content_type))
    audio, mime_type = await client.speak("Hello there.", voice="Puck", speed=1.5)
    expected = recorded.expected()
    assert mime_type == "audio/wav" and audio[:4] == b"RIFF" and audio[8:16] == b"WAVEfmt "
    assert int.from_bytes(audio[24:28], "little") == expected["rate"]  # the sample rate the vendor named
    assert int.from_bytes(audio[40:44], "little") == expected["pcm_bytes"] == len(audio) - 44
    sent = transport.requests[0]
    assert sent.url.endswith("/models/gemini-2.5-flash-preview-tts:generateContent")
    config = json.loads(sent.body or b"")["generationConfig"]
    assert config == {"responseModalities": ["AUDIO"],
                      "speechConfig": {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "Puck"}}}}
