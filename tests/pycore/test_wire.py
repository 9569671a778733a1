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
    vendors = {v["id"]: v for v in info["vendors"]}  # the adapters' catalogue: the page reads it, not a list of its own
    assert {"anthropic", "openai"} <= set(vendors) and vendors["anthropic"]["needs_key"] is True


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


# -- the chat app's methods (docs/PROTOCOL.md) --------------------------------------------------------

import contextlib  # noqa: E402

from vendor_fixtures import BY_FILE  # noqa: E402

from pycore.http.replay import Recording, ReplayTransport  # noqa: E402
from pycore.methods import _provider  # noqa: E402

KEY = "sk-proj-WIRETEST-abcdefghijklmnop"
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
    listing = b'{"data":[{"id":"gpt-4o","object":"model"},{"id":"o3","object":"model"}],"object":"list"}'
    with serving(Recording(listing)):
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


async def test_a_vendor_that_cannot_be_reached_is_named_by_its_host(monkeypatch):
    """The page names the address it could not reach from the result's fields, not from the message (which
    in a browser is only "TypeError: Failed to fetch"); a stream cut after the vendor answered names none."""
    from pycore.http import retry

    monkeypatch.setattr(retry, "backoff", lambda *_: 0)  # the retries still happen, without the waits
    hi = [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]
    with serving(Recording(b"", connect_error=True)) as transports:
        result, _, _ = await call("chat.run", {"provider": {**provider("openai"), "base_url": "http://127.0.0.1:9/v1"},
                                               "model": "m", "messages": hi})
    assert len(transports[0].requests) == 3  # the first try and two retries
    assert result["stop_reason"] == "error"
    assert result["error"] == {"code": "vendor_unreachable", "type": "connection_error", "host": "127.0.0.1:9",
                               "vendor": "openai", "message": "connection refused (replay)"}

    with serving(recording("openai/chat-stream-text-usage.sse", cut_after=200)):
        result, _, _ = await call("chat.run", {"provider": provider("openai"), "model": "m", "messages": hi})
    assert result["error"]["type"] == "connection_error" and "host" not in result["error"]
    assert result["error"]["code"] == "vendor_connection_lost"


async def test_bad_params_name_the_problem():
    with pytest.raises(ValueError, match="unknown vendor 'nope'"):
        await call("chat.run", {"provider": {"vendor": "nope"}, "model": "m", "messages": [{"role": "user"}]})
    with pytest.raises(ValueError, match="model: Field required"):
        await call("chat.run", {"provider": provider(), "messages": []})
    with pytest.raises(ValueError, match="openai-compatible provider needs a base_url"):
        await call("models.list", {"provider": {"vendor": "openai-compatible"}})


def fake_turns(*turns) -> list[Recording]:
    from pycore.adapters.fake import encode_turn

    return [Recording(encode_turn(turn), content_type="application/x-ndjson") for turn in turns]


def user(text: str) -> list[dict]:
    return [{"role": "user", "parts": [{"type": "text", "text": text}]}]


async def test_page_tools_and_python_tool_sets_are_run_by_the_page_each_named_by_its_source():
    """The user's Python tools run in the page's sandbox, not in this worker: the core only offers them."""
    from pycore.messages import ToolCallPart

    answers: list[asyncio.Task] = []

    def on_event(event: dict) -> None:
        if event["type"] == "page_tool":
            if event["source"] == "page":
                answer = {"content": [{"type": "text", "text": f"clicked {event['arguments']['id']}"}]}
            else:
                answer = {"content": [{"type": "text", "text": "49"}], "structured_content": 49}
            answers.append(asyncio.ensure_future(call("chat.page_tool_result", {"call_id": event["call_id"],
                                                                                 **answer})))

    calls = [ToolCallPart(id="p1", name="click", arguments={"id": "ok"}), ToolCallPart(id="q1", name="square",
                                                                                          arguments={"x": 7})]
    square = {"name": "square", "source": "python:math", "description": "x squared",
              "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}
    with serving(*fake_turns(calls, ["Both done."])) as transports:
        result, events, raw = await call("chat.run", {
            "provider": {"vendor": "fake", "api_key": KEY}, "model": "m", "messages": user("go"),
            "tools": {"page": [{"name": "click", "description": "Click a button", "inputSchema": {"type": "object"}},
                               square]}}, on_event)
    assert result["stop_reason"] == "end_turn" and result["steps"] == 2
    asked = {e["call_id"]: e for e in events if e["type"] == "page_tool"}
    assert asked["p1"] == {"type": "page_tool", "call_id": "p1", "source": "page", "name": "click",
                           "arguments": {"id": "ok"}}
    assert asked["q1"] == {"type": "page_tool", "call_id": "q1", "source": "python:math", "name": "square",
                           "arguments": {"x": 7}}
    ends = {e["call_id"]: e for e in events if e["type"] == "tool_end"}
    assert ends["p1"]["content"] == [{"type": "text", "text": "clicked ok"}]
    assert ends["q1"]["content"] == [{"type": "text", "text": "49"}] and ends["q1"]["structured_content"] == 49
    starts = {e["call_id"]: e["source"] for e in events if e["type"] == "tool_start"}
    assert starts == {"p1": "page", "q1": "python:math"}
    sent = transports[0].requests[1].body.decode()
    assert "clicked ok" in sent and "49" in sent
    assert [(await answer)[0] for answer in answers] == [{}, {}]


async def test_python_source_never_runs_in_the_worker():
    """No method takes source text any more, and a tool's source must be the page or a Python set."""
    with pytest.raises(wire.UnknownMethodError, match="tools.python"):
        await call("tools.python", {"id": "x", "source": "def f() -> int:\n    return 1\n"})
    with pytest.raises(ValueError, match="source"):
        await call("chat.run", {"provider": provider(), "model": "m", "messages": user("hi"),
                                "tools": {"page": [{"name": "t", "source": "mcp:evil"}]}})


async def test_approve_and_page_results_for_unknown_calls_are_clear_errors():
    from pycore.agent.pending import UnknownCallError

    with pytest.raises(UnknownCallError, match="no tool call 'nope' is waiting for approval"):
        await call("chat.approve", {"call_id": "nope", "decision": "allow"})
    with pytest.raises(ValueError, match="decision must be 'allow', 'deny' or 'always'"):
        await call("chat.approve", {"call_id": "nope", "decision": "maybe"})
    with pytest.raises(UnknownCallError, match="no tool call 'x' is waiting for a page tool result"):
        await call("chat.page_tool_result", {"call_id": "x", "content": [{"type": "text", "text": "?"}]})


async def test_the_worker_gets_the_events_of_one_step_together_in_order_all_before_the_result():
    """What the worker calls (``wire.call``): the events a body read makes cross to JavaScript as one JSON array
    (issue 36 item 3: each crossing costs), none lost or reordered, the last ones before the task's result."""
    hi = [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]
    with serving(recording("anthropic/stream-text.sse")):
        _, one_by_one, _ = await call("chat.run", {"provider": provider(), "model": "claude", "messages": hi})
    batches: list[list[dict]] = []
    with serving(recording("anthropic/stream-text.sse")):
        task = wire.call("chat.run", json.dumps({"provider": provider(), "model": "claude", "messages": hi}),
                         lambda text: batches.append(json.loads(text)))
        outcome = json.loads(await task)
    assert outcome["result"]["stop_reason"] == "end_turn"
    assert [event for batch in batches for event in batch] == one_by_one
    assert all(batches) and len(batches) < len(one_by_one)  # gathered, never an empty crossing


async def test_the_key_is_redacted_from_events_results_and_errors_whatever_echoes_it():
    """A model that repeats the key, a tool that returns it, an error that quotes it: none reaches the page."""
    from pycore.messages import ToolCallPart

    answers: list[asyncio.Task] = []

    def leak(event: dict) -> None:  # a tool the page runs, whose result quotes the key
        if event["type"] == "page_tool":
            answers.append(asyncio.ensure_future(call("chat.page_tool_result", {
                "call_id": event["call_id"], "content": [{"type": "text", "text": f"the key is {KEY}"}]})))

    turns = fake_turns([f"my key is {KEY}", ToolCallPart(id="l1", name="leak", arguments={})], ["ok"])
    with serving(*turns):
        result, events, raw = await call("chat.run", {"provider": provider("fake"), "model": "m",
                                                       "messages": user("hi"),
                                                       "tools": {"page": [{"name": "leak", "source": "python:x"}]}},
                                         leak)
    assert result["stop_reason"] == "end_turn"
    assert not any(KEY in line for line in raw)
    assert any("my key is [redacted]" in line for line in raw)
    assert any("the key is [redacted]" in line for line in raw)
    from pycore.exceptions import APIConnectionError
    from pycore.http import Transport

    class Unreachable(Transport):  # what the httpx transport says when a host does not resolve
        async def send(self, request):
            raise APIConnectionError(f"could not reach {request.url.split('/')[2].lower()}: ConnectError")

    _provider.use_transport(Unreachable)
    try:
        with pytest.raises(wire.WireError) as caught:
            await call("models.list", {"provider": {"vendor": "openai-compatible", "api_key": KEY,
                                                    "base_url": f"http://{KEY}.example"}})
    finally:
        _provider.use_transport(None)
    assert KEY not in str(caught.value) and "[redacted]" in str(caught.value)


def test_secrets_are_found_under_credential_keys_at_any_depth():
    params = {"provider": {"api_key": "k-123456"}, "headers": {"Authorization": "Bearer tok-abcdef", "Accept": "x/y"}}
    assert sorted(wire.secrets_in(params)) == ["Bearer tok-abcdef", "k-123456", "tok-abcdef"]


async def test_audio_transcribe_returns_the_words_of_the_clip():
    import base64

    clip = base64.b64encode(BY_FILE["openai/audio-speech.wav"].body()).decode()
    with serving(recording("openai/audio-transcription.json")) as transports:
        result, _, _ = await call("audio.transcribe", {"provider": provider("openai"), "audio": clip,
                                                        "mime_type": "audio/wav", "chat_model": "gpt-4o-mini"})
    assert result == {"text": BY_FILE["openai/audio-transcription.json"].expected()["text"]}
    assert transports[0].requests[0].url.endswith("/audio/transcriptions")


async def test_audio_speech_returns_the_vendors_audio_in_base64():
    import base64

    with serving(recording("openai/audio-speech.wav")):
        result, _, _ = await call("audio.speech", {"provider": provider("openai"), "text": "Hello.", "speed": 1.5})
    assert result == {"audio": base64.b64encode(BY_FILE["openai/audio-speech.wav"].body()).decode(),
                      "mime_type": "audio/wav"}


async def test_concurrent_runs_each_get_their_own_approvals_and_page_tool_results():
    """Compare (#35) runs one message on several models at once in one worker. Two runs may name a tool call alike
    (Gemini and Ollama make ids up from the call's name and arguments; two models asked the same thing call the same
    tool), so each run gives the core its own ``run_id``, and the page answers an approval or a page tool's result
    for that run: an answer never lands on the other run's call, and one run asking does not break the other."""
    from pycore.messages import ToolCallPart

    def on_event(run_id: str):
        def answer(event: dict) -> None:
            if event["type"] == "approval":
                asyncio.ensure_future(call("chat.approve", {"run_id": run_id, "call_id": event["call_id"],
                                                            "decision": "allow"}))
            elif event["type"] == "page_tool":
                asyncio.ensure_future(call("chat.page_tool_result", {
                    "run_id": run_id, "call_id": event["call_id"],
                    "content": [{"type": "text", "text": f"clicked for {run_id}"}]}))

        return answer

    click = {"name": "click", "description": "Click a button", "inputSchema": {"type": "object"}}
    same_call = [ToolCallPart(id="call_1", name="click", arguments={"id": "ok"})]
    with serving(*fake_turns(same_call, ["done"])) as transports:
        results = await asyncio.gather(*(call("chat.run", {
            "run_id": run_id, "provider": {"vendor": "fake", "api_key": KEY}, "model": run_id, "messages": user("go"),
            "tools": {"page": [click]}, "policy": [{"source": "page", "tool": "click", "policy": "ask"}]},
            on_event(run_id)) for run_id in ("model-a", "model-b")))
    for (result, events, _), run_id in zip(results, ("model-a", "model-b"), strict=True):
        assert result["stop_reason"] == "end_turn", result
        ends = [e for e in events if e["type"] == "tool_end"]
        assert [e["content"] for e in ends] == [[{"type": "text", "text": f"clicked for {run_id}"}]]
    sent = sorted(t.requests[1].body.decode() for t in transports)
    assert "clicked for model-a" in sent[0] and "clicked for model-b" in sent[1]
    assert not any("model-b" in body for body in sent[:1])
