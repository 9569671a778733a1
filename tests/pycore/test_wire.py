"""The Python half of the page <-> worker protocol (web/protocol.js is the other half)."""

import asyncio
import json

import pytest

from pycore import __version__, wire

pytestmark = pytest.mark.pyodide


def test_info_names_version_python_and_methods():
    info = json.loads(wire.info())
    assert info["version"] == __version__
    assert "core.echo" in info["methods"]
    assert info["python"].count(".") == 2


async def test_echo_streams_events_then_returns_the_result():
    events = []
    task = wire.start("core.echo", json.dumps({"text": "hello brave world"}), events.append)
    result = json.loads(await task)
    assert result == {"text": "hello brave world"}
    decoded = [json.loads(e) for e in events]
    assert [e["type"] for e in decoded] == ["text_delta"] * 3
    assert "".join(e["text"] for e in decoded) == "hello brave world"


def test_unknown_method_is_a_clear_error():
    with pytest.raises(wire.UnknownMethodError, match="unknown method 'nope'.*core.echo"):
        wire.start("nope", "{}", lambda _: None)


async def test_a_running_call_can_be_cancelled():
    events = []
    task = wire.start("core.echo", json.dumps({"text": "a b c d"}), events.append)
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(events) < 4


# -- the chat app's methods (coord/WIRE.md) --------------------------------------------------------

import contextlib  # noqa: E402

from vendor_fixtures import FIXTURES  # noqa: E402

from pycore.http.replay import Recording, ReplayTransport  # noqa: E402
from pycore.methods import _provider  # noqa: E402

KEY = "sk-proj-WIRETEST-abcdefghijklmnop"
BY_FILE = {f.file: f for f in FIXTURES}
STREAM_EVENT_TYPES = {"text_delta", "reasoning_delta", "tool_call_start", "tool_call_args_delta", "tool_call_end",
                      "usage", "finish", "error"}
LOOP_EVENT_TYPES = {"step", "message", "approval", "tool_start", "page_tool", "tool_progress", "tool_end"}


def recording(file: str, **kwargs) -> Recording:
    f = BY_FILE[file]
    return Recording(f.body(), status=f.status, content_type=f.content_type, chunk_size=kwargs.pop("chunk_size", 29),
                     **kwargs)


@contextlib.contextmanager
def serving(*recordings: Recording):
    transports: list[ReplayTransport] = []

    def factory() -> ReplayTransport:
        transports.append(ReplayTransport(list(recordings)))
        return transports[-1]

    _provider.use_transport(factory)
    try:
        yield transports
    finally:
        _provider.use_transport(None)


async def call(method: str, params: dict, on_event=None) -> tuple[dict, list[dict], list[str]]:
    raw: list[str] = []

    def emit(text: str) -> None:
        raw.append(text)
        if on_event:
            on_event(json.loads(text))

    result = await wire.start(method, json.dumps(params), emit)
    return json.loads(result), [json.loads(e) for e in raw], raw + [result]


def provider(vendor: str = "anthropic") -> dict:
    return {"vendor": vendor, "api_key": KEY}


async def test_models_list_returns_ids():
    with serving(Recording(b'{"data":[{"id":"gpt-4o","object":"model"},{"id":"o3","object":"model"}],"object":"list"}')):
        result, events, _ = await call("models.list", {"provider": provider("openai")})
    assert result == {"models": [{"id": "gpt-4o"}, {"id": "o3"}]} and events == []


async def test_chat_run_streams_text_events_then_the_message_and_the_result():
    with serving(recording("anthropic/stream-text.sse")) as transports:
        result, events, raw = await call("chat.run", {"provider": provider(), "model": "claude",
                                                       "messages": [{"role": "user", "parts": [{"type": "text",
                                                                                                "text": "hi"}]}]})
    assert result == {"stop_reason": "end_turn", "usage": {"input_tokens": 135, "output_tokens": 10}, "steps": 1}
    assert events[0] == {"type": "step", "step": 1}
    assert {e["type"] for e in events} <= STREAM_EVENT_TYPES | LOOP_EVENT_TYPES
    assert all(e["step"] == 1 for e in events)
    text = "".join(e["text"] for e in events if e["type"] == "text_delta")
    assert text == "[12345,67890]"
    message = events[-1]
    assert message == {"type": "message", "step": 1,
                       "message": {"role": "assistant", "parts": [{"type": "text", "text": text, "refusal": False,
                                                                   "vendor": "anthropic"}]}}
    assert transports[0].requests[0].headers["x-api-key"] == KEY  # the key went to the vendor, and only there
    assert not any(KEY in line for line in raw)


async def test_stop_mid_stream_keeps_the_partial_message_and_returns_stopped():
    seen: list[dict] = []
    with serving(recording("openai/chat-stream-text-usage.sse", chunk_size=40, delay=0.01)):
        task = wire.start("chat.run", json.dumps({"provider": provider("openai"), "model": "m",
                                                  "messages": [{"role": "user", "parts": [{"type": "text",
                                                                                           "text": "hi"}]}]}),
                          lambda e: seen.append(json.loads(e)))
        while not any(e["type"] == "text_delta" for e in seen):
            await asyncio.sleep(0.005)
        task.cancel()
        result = json.loads(await task)
    assert result["stop_reason"] == "stopped"
    last = seen[-1]
    assert last["type"] == "message" and last["incomplete"] is True
    kept = "".join(p["text"] for p in last["message"]["parts"] if p["type"] == "text")
    streamed = "".join(e["text"] for e in seen if e["type"] == "text_delta")
    assert kept == streamed and 0 < len(kept) < len("The capital of the UK is London.")


async def test_a_vendor_401_ends_the_run_with_a_clear_error_and_no_key():
    with serving(recording("openai/error-401-invalid-api-key.json")):
        result, events, raw = await call("chat.run", {"provider": provider("openai"), "model": "m",
                                                       "messages": [{"role": "user", "parts": [{"type": "text",
                                                                                                "text": "hi"}]}]})
    assert result["stop_reason"] == "error"
    assert result["error"]["status"] == 401 and result["error"]["type"] == "invalid_request_error"
    assert "Incorrect API key" in result["error"]["message"]
    assert not any(KEY in line for line in raw)


async def test_bad_params_name_the_problem():
    with pytest.raises(ValueError, match="unknown vendor 'nope'"):
        await call("chat.run", {"provider": {"vendor": "nope"}, "model": "m", "messages": [{"role": "user"}]})
    with pytest.raises(ValueError, match="needs a model"):
        await call("chat.run", {"provider": provider(), "messages": []})
    with pytest.raises(ValueError, match="openai-compatible provider needs a base_url"):
        await call("models.list", {"provider": {"vendor": "openai-compatible"}})
