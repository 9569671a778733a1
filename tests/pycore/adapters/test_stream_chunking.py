"""Any chunking of a stream gives what the whole body in one chunk gives.

Streams are drawn from the vendor's recorded events, from delta events built here (any text, escaped
or not, changing items and models, Gemini's two spacings, Ollama's thinking lines) and from byte-level
mutations of both (quotes, backslashes, control characters, spaces, braces, line ends), then cut at
random points, CRLF line ends sometimes. Cut anywhere, a stream must give the same completion, the same
error, and (when there is no error) the same events once consecutive deltas of a part are joined: the
parser merges them per fed chunk only.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vendor_fixtures import ROOT, STREAMED

from pycore.adapters import catalogue, get_adapter
from pycore.messages import ReasoningDelta, TextDelta, ToolCallArgsDelta

pytestmark = pytest.mark.pyodide

VENDORS = [v.id for v in catalogue() if v.adapter == v.id]  # every real adapter; an alias adds no parser


def recorded_events(vendor: str) -> list[bytes]:
    """Every event (NDJSON: line) of the vendor's streamed recordings, with LF line ends."""
    out: list[bytes] = []
    for fixture in STREAMED:
        if fixture.vendor == vendor:
            body = fixture.body().replace(b"\r\n", b"\n")
            unit = rb"[^\n]*\n" if vendor == "ollama" else rb"(?:[^\n]+\n)*\n"
            out += [u for u in re.findall(unit, body) if u.strip()]
    return out


RECORDED = {vendor: recorded_events(vendor) for vendor in VENDORS}
assert all(RECORDED.values()), "an adapter has no streamed recording in tests/fixtures/vendors"
TEXT = st.text(max_size=12) | st.sampled_from(["", "é", "日本", "🙂", '"', "\\", "\n", "\t", "\u2028", "a\u0000b"])


# Written by hand, not by a JSON encoder: raw control characters, stray backslashes, pieces of \\u
# escapes, lone surrogates (\\ud83d), \\/ ... valid JSON or not.
RAW = st.text(alphabet=["a", "é", "\\", '"', "\t", "\x01", "\x7f", "u", "n", "d", "8", "3", "0", "x", "/", " "],
              max_size=10)


@st.composite
def json_string(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 3)) == 0:
        return f'"{draw(RAW)}"'
    return json.dumps(draw(TEXT), ensure_ascii=draw(st.booleans()))


@st.composite
def delta_event(draw: st.DrawFn, vendor: str) -> bytes:
    """A piece of text, reasoning or tool arguments in the vendor's own layout, with drawn values."""
    text = draw(json_string())
    if vendor == "openai":
        chunk_id, model = draw(st.sampled_from([("chatcmpl-1", "gpt-4o-mini"), ("chatcmpl-2", "gpt-4o"), ("", "")]))
        extra = draw(st.sampled_from(['"service_tier":"default","system_fingerprint":"fp_1",', "", '"x":1,']))
        event = (
            f'{{"id":"{chunk_id}","object":"chat.completion.chunk","created":1782955818,"model":"{model}",{extra}'
            f'"choices":[{{"index":0,"delta":{{"content":{text}}},"logprobs":null,"finish_reason":null}}],'
            f'"usage":null,"obfuscation":"abc"}}'
        )
        return f"data: {event}\n\n".encode()
    if vendor == "openai-responses":
        kind = draw(st.sampled_from(["output_text", "reasoning_summary_text", "function_call_arguments"]))
        item = draw(st.sampled_from(["msg_1", "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9",
                                     "fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2"]))
        index = {"output_text": ',"content_index":0', "reasoning_summary_text": ',"summary_index":1'}.get(kind, "")
        event = (
            f'{{"type":"response.{kind}.delta","sequence_number":{draw(st.integers(0, 99))},"item_id":"{item}",'
            f'"output_index":0{index},"delta":{text},"obfuscation":"x"}}'
        )
        return f"event: response.{kind}.delta\ndata: {event}\n\n".encode()
    if vendor == "anthropic":
        kind, field = draw(st.sampled_from([("text_delta", "text"), ("thinking_delta", "thinking"),
                                            ("input_json_delta", "partial_json")]))
        index, pad = draw(st.integers(0, 2)), " " * draw(st.integers(0, 3))
        event = f'{{"type":"content_block_delta","index":{index},"delta":{{"type":"{kind}","{field}":{text}}}{pad}}}'
        return f"event: content_block_delta\ndata: {event}\n\n".encode()
    if vendor == "gemini":
        s = " " if draw(st.booleans()) else ""  # Gemini 2 writes '": ', Gemini 3 '":'
        thought = f',"thought":{s}true' if draw(st.booleans()) else ""
        tokens = draw(st.sampled_from([15, 15, 16]))
        usage = (f'{{"promptTokenCount":{s}{tokens},"totalTokenCount":{s}{tokens},'
                 f'"promptTokensDetails":{s}[{{"modality":{s}"TEXT","tokenCount":{s}{tokens}}}]}}')
        event = (
            f'{{"candidates":{s}[{{"content":{s}{{"parts":{s}[{{"text":{s}{text}{thought}}}],"role":{s}"model"}}}}],'
            f'"usageMetadata":{s}{usage},"modelVersion":{s}"gemini-2.5-pro","responseId":{s}"r1"}}'
        )
        return f"data: {event}\n\n".encode()
    thinking = '"","thinking":' if draw(st.booleans()) else ""
    model = draw(st.sampled_from(["gemma3:1b", "gpt-oss:120b", ""]))
    return (
        f'{{"model":"{model}","created_at":"2025-08-20T13:48:24.316155Z","message":{{"role":"assistant",'
        f'"content":{thinking}{text}}},"done":false}}\n'
    ).encode()


NOISE = [b'"', b"\\", b" ", b"\n", b"\x01", b"{", b"}", b",", b":", b"0", b"\xc3\xa9", b"u", b"\r"]


@st.composite
def mutated(draw: st.DrawFn, event: bytes) -> bytes:
    for _ in range(draw(st.integers(1, 2))):
        at = draw(st.integers(0, len(event)))
        cut = draw(st.integers(0, 1))
        event = event[:at] + draw(st.sampled_from(NOISE)) + event[at + cut :]
    return event


@st.composite
def stream(draw: st.DrawFn, vendor: str) -> list[bytes]:
    events = []
    for _ in range(draw(st.integers(1, 25))):
        event = draw(st.one_of(delta_event(vendor), delta_event(vendor), st.sampled_from(RECORDED[vendor])))
        events.append(draw(mutated(event)) if draw(st.integers(0, 5)) == 0 else event)
    body = b"".join(events)
    if vendor != "ollama" and draw(st.booleans()):
        body = body.replace(b"\n", b"\r\n")
    cuts = sorted(draw(st.sets(st.integers(1, max(len(body) - 1, 1)), max_size=8)))
    return [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]


def joined(events: list[Any]) -> list[Any]:
    """The events with consecutive deltas of one part joined into one."""
    out: list[Any] = []
    for event in events:
        last = out[-1] if out else None
        if isinstance(event, TextDelta | ReasoningDelta) and type(last) is type(event) and last.index == event.index:
            out[-1] = type(event)(**{**last.model_dump(), "text": last.text + event.text})
        elif isinstance(event, ToolCallArgsDelta) and isinstance(last, ToolCallArgsDelta) and last.index == event.index:
            out[-1] = ToolCallArgsDelta(index=event.index, delta=last.delta + event.delta)
        else:
            out.append(event)
    return out


def outcome(vendor: str, chunks: list[bytes], *, status: int = 200) -> tuple[list[Any] | None, str | None, Any]:
    """The joined events (None after an error: the events of the chunk that raised are not returned), the
    error, and the completion."""
    parser = get_adapter(vendor).stream_parser(status=status)
    events: list[Any] = []
    error = None
    try:
        for chunk in chunks:
            events += parser.feed(chunk)
        events += parser.finish()
    except Exception as e:  # the same error, or the test fails
        error = f"{type(e).__name__}: {e}"
    return (None if error else joined(events)), error, parser.completion(incomplete=error is not None)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
@pytest.mark.parametrize("vendor", VENDORS)
def test_any_chunking_gives_what_one_chunk_gives(vendor: str, data: st.DataObject) -> None:
    chunks = data.draw(stream(vendor))
    assert outcome(vendor, chunks) == outcome(vendor, [b"".join(chunks)])


@pytest.mark.parametrize("fixture", STREAMED, ids=str)
def test_every_recording_reads_the_same_in_any_pieces(fixture: Any) -> None:
    """Every recorded event in its real context (the drawn streams above may miss a rare one)."""
    body = fixture.body()
    whole = outcome(fixture.vendor, [body], status=fixture.status)
    for size in (97, 1):
        chunks = [body[i : i + size] for i in range(0, len(body), size)]
        assert outcome(fixture.vendor, chunks, status=fixture.status) == whole


def test_a_surrogate_pair_split_over_two_events_is_two_lone_halves() -> None:
    """Each event's JSON is read on its own, as the vendors' SDKs read it."""
    pieces = [r"a\n\ud83d", r"\ude00\"b", r"c\\\\"]
    body = "".join(f'{{"model":"m","created_at":"t","message":{{"role":"assistant","content":"{p}"}},'
                   f'"done":false}}\n' for p in pieces)
    events, error, completion = outcome("ollama", [body.encode()])
    assert error is None
    assert completion.text() == "a\n\ud83d\ude00\"bc\\\\"


def test_a_tool_block_started_twice_at_one_index_gives_two_calls_not_a_key_error() -> None:
    """A hostile or broken Anthropic stream starts content block 0 twice (T-P5's kind): the first call ends
    where the second starts, the deltas after it are the second call's, and closing the stream still works."""
    recorded = (ROOT / "tests/fixtures/vendors/anthropic/stream-tool-use.sse").read_bytes()
    start = re.search(rb"event: content_block_start\ndata: [^\n]*\n\n", recorded)
    assert start is not None
    second = start.group(0).replace(b"toolu_018acGYLtfR52q9yDbWaEdQZ", b"toolu_second").replace(
        b'"get_weather"', b'"get_time"')
    body = recorded[:start.end()] + second + recorded[start.end():]
    events, error, completion = outcome("anthropic", [body])
    assert error is None, error
    calls = completion.tool_calls()
    assert [(c.id, c.name) for c in calls] == [("toolu_018acGYLtfR52q9yDbWaEdQZ", "get_weather"),
                                               ("toolu_second", "get_time")]
    assert calls[0].arguments == {} and calls[1].arguments == {"location": "San Francisco, CA", "units": "f"}
    assert outcome("anthropic", [body[i:i + 7] for i in range(0, len(body), 7)]) == (events, error, completion)
