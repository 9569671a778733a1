"""Each vendor's usual-event fast path (``StreamParser.usual_event``) reads exactly what the generic path reads.

Streams are drawn from the vendor's recorded events, from usual events built here (any text, escaped
or not, heads that change, Gemini's two spacings, Ollama's thinking lines) and from byte-level
mutations of both (quotes, backslashes, control characters, spaces, braces, line ends), then cut at
random points, CRLF line ends sometimes. The same parser with and without its fast path must give the
same events, the same completion, and the same error.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vendor_fixtures import STREAMED

from pycore.adapters import get_adapter

pytestmark = pytest.mark.pyodide

VENDORS = ["openai", "openai-responses", "anthropic", "gemini", "ollama"]


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
def usual(draw: st.DrawFn, vendor: str) -> bytes:
    """An event of the shape the vendor's fast path is written for, with drawn values."""
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
        event = draw(st.one_of(usual(vendor), usual(vendor), st.sampled_from(RECORDED[vendor])))
        events.append(draw(mutated(event)) if draw(st.integers(0, 5)) == 0 else event)
    body = b"".join(events)
    if vendor != "ollama" and draw(st.booleans()):
        body = body.replace(b"\n", b"\r\n")
    cuts = sorted(draw(st.sets(st.integers(1, max(len(body) - 1, 1)), max_size=8)))
    return [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]


def outcome(vendor: str, chunks: list[bytes], *, fast: bool, status: int = 200) -> tuple[list[Any], str | None, Any]:
    parser = get_adapter(vendor).stream_parser(status=status)
    if not fast:
        parser._usual = None  # the generic path only
    events: list[Any] = []
    error = None
    try:
        for chunk in chunks:
            events += parser.feed(chunk)
        events += parser.finish()
    except Exception as e:  # the same error, or the test fails
        error = f"{type(e).__name__}: {e}"
    return events, error, parser.completion(incomplete=error is not None)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
@pytest.mark.parametrize("vendor", VENDORS)
def test_the_fast_path_gives_what_the_generic_path_gives(vendor: str, data: st.DataObject) -> None:
    chunks = data.draw(stream(vendor))
    assert outcome(vendor, chunks, fast=True) == outcome(vendor, chunks, fast=False)


@pytest.mark.parametrize("fixture", STREAMED, ids=str)
def test_every_recording_reads_the_same_both_ways(fixture: Any) -> None:
    """Every recorded event in its real context (the drawn streams above may miss a rare one)."""
    body = fixture.body()
    for size in (len(body), 97, 1):
        chunks = [body[i : i + size] for i in range(0, len(body), size)]
        fast = outcome(fixture.vendor, chunks, fast=True, status=fixture.status)
        assert fast == outcome(fixture.vendor, chunks, fast=False, status=fixture.status)


# Azure writes its chunks in its own layout (content_filter_results first): the generic path reads them.
OWN_LAYOUT = {"openai/chat-stream-azure-content-filter.sse"}


@pytest.mark.parametrize("fixture", [f for f in STREAMED if f.file not in OWN_LAYOUT], ids=str)
def test_every_usual_event_of_a_recording_takes_the_fast_path(fixture: Any) -> None:
    """No event the generic path reads as a usual delta was decoded by it: the patterns fit the vendors' real bytes."""
    parser = get_adapter(fixture.vendor).stream_parser(status=fixture.status)
    decoded: list[Any] = []
    generic_usual: list[Any] = []
    decode, usual_delta = parser.decode, parser.usual_delta

    def decode_spy(item: Any) -> Any:
        decoded.append(decode(item))
        return decoded[-1]

    def usual_delta_spy(payload: Any) -> Any:  # also asked by the fast path, about a stand-in event
        delta = usual_delta(payload)
        if delta is not None and decoded and payload is decoded[-1]:
            generic_usual.append(payload)
        return delta

    parser.decode = decode_spy  # type: ignore[method-assign]
    parser.usual_delta = usual_delta_spy  # type: ignore[method-assign]
    parser.feed(fixture.body())
    parser.finish()
    assert decoded, "the spy saw the generic path"
    assert generic_usual == []


@pytest.mark.parametrize("vendor", ["anthropic", "ollama"])
def test_a_surrogate_pair_split_over_two_pieces_reads_as_the_generic_path_reads_it(vendor: str) -> None:
    # Each piece is decoded on its own there: two lone halves, not one emoji. Escapes without \u
    # decode the same joined, and a run joins its pieces before decoding them.
    pieces = [r"a\n\ud83d", r"\ude00\"b", r"c\\\\"]
    if vendor == "anthropic":
        body = "".join(f'event: content_block_delta\ndata: {{"type":"content_block_delta","index":0,'
                       f'"delta":{{"type":"text_delta","text":"{p}"}}}}\n\n' for p in pieces)
    else:
        body = "".join(f'{{"model":"m","created_at":"t","message":{{"role":"assistant","content":"{p}"}},'
                       f'"done":false}}\n' for p in pieces)
    chunks = [body.encode()]
    fast, generic = outcome(vendor, chunks, fast=True), outcome(vendor, chunks, fast=False)
    assert fast == generic
    assert fast[2].text() == "a\n\ud83d\ude00\"bc\\\\"


def test_the_events_skipped_as_no_ops_have_no_handler() -> None:
    from pycore.adapters.openai_responses import _HANDLERS, NO_OP_TYPES

    assert NO_OP_TYPES and not set(NO_OP_TYPES) & set(_HANDLERS)


@pytest.mark.parametrize(
    ("pattern", "group"),
    [
        (r"a(?P<h>b(c)d)e", r"(?P<h>b(c)d)"),
        (r"(?P<h>[()]x)y", r"(?P<h>[()]x)"),
        (r"(?P<h>[^)\]]+)z", r"(?P<h>[^)\]]+)"),
        (r"(?P<h>[]()]\))w", r"(?P<h>[]()]\))"),
        (r"(?P<h>\(\\)v", r"(?P<h>\(\\)"),
        (r'(?P<h>[^"]*","x":(?:"[^"]*"|null))', r'(?P<h>[^"]*","x":(?:"[^"]*"|null))'),
    ],
)
def test_a_head_group_ends_at_its_own_closing_parenthesis(pattern: str, group: str) -> None:
    """What the events after a match's first repeat as a back-reference: the whole head group, no more."""
    from pycore.adapters._base import _group_end

    start = pattern.index("(?P<h>")
    assert pattern[start : _group_end(pattern, start)] == group
    assert re.compile(group).groups >= 1


@pytest.mark.parametrize("usual", [r"(?P<h>a)(?P<text>b)(c)", r"(?P<h>a)(?P<text>b)(?P<text_2>c)", r"(?P<text>b)"])
def test_a_usual_event_pattern_the_fast_path_cannot_use_is_refused_when_the_parser_is_defined(usual: str) -> None:
    from pycore.adapters._base import StreamParser

    with pytest.raises(TypeError, match="usual_event"):
        type("Odd", (StreamParser,), {"usual_event": usual, "handle": lambda self, payload: []})
