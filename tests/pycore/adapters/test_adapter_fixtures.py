"""Every recorded vendor response gives its expected unified result, at every chunking.

The recordings and their ``*.expected.json`` (produced by each vendor's official SDK) live in
``tests/fixtures/vendors``; all keys of the expected file are compared, except ``_oracle``.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vendor_fixtures import FIXTURES, STREAMED, Fixture, subset

from pycore.adapters import get_adapter
from pycore.exceptions import StreamFormatError
from pycore.messages import ReasoningDelta, TextDelta, ToolCallEnd
from pycore.replay import replay

pytestmark = pytest.mark.pyodide


def test_the_manifest_was_found_and_covers_every_vendor() -> None:
    assert len(FIXTURES) >= 50
    assert {f.vendor for f in FIXTURES} == {"openai", "openai-responses", "anthropic", "gemini", "ollama"}


@pytest.mark.parametrize("fixture", FIXTURES, ids=str)
def test_fixture_gives_its_expected_result(fixture: Fixture) -> None:
    expected = fixture.expected()
    got = replay(fixture.vendor, fixture.body(), status=fixture.status).summary()
    assert subset(got, expected) == expected


@pytest.mark.parametrize("chunk_size", [1, 7, 97])
@pytest.mark.parametrize("fixture", STREAMED, ids=str)
def test_fixed_chunk_sizes(fixture: Fixture, chunk_size: int) -> None:
    expected = fixture.expected()
    got = replay(fixture.vendor, fixture.body(), status=fixture.status, chunk_size=chunk_size).summary()
    assert subset(got, expected) == expected


def _chunks(body: bytes, cuts: set[int]) -> list[bytes]:
    edges = [0, *sorted(cuts), len(body)]
    return [body[a:b] for a, b in zip(edges, edges[1:], strict=False)]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
@pytest.mark.parametrize("fixture", STREAMED, ids=str)
def test_random_chunking_does_not_change_the_result(fixture: Fixture, data: st.DataObject) -> None:
    body = fixture.body()
    # Boundaries anywhere, including inside multi-byte UTF-8 characters: bias some cuts onto them.
    multibyte = [i for i, b in enumerate(body) if b >= 0x80 and i > 0] or [1]
    cuts = data.draw(st.sets(st.integers(1, max(len(body) - 1, 1)), max_size=40))
    cuts |= data.draw(st.sets(st.sampled_from(multibyte), max_size=5))
    parser = get_adapter(fixture.vendor).stream_parser(status=fixture.status)
    for chunk in _chunks(body, cuts):
        parser.feed(chunk)
    parser.finish()
    expected = fixture.expected()
    assert subset(parser.completion().summary(), expected) == expected


@pytest.mark.parametrize("fixture", STREAMED, ids=str)
def test_streamed_events_add_up_to_the_completion(fixture: Fixture) -> None:
    """Events and the final message come from the same parts: they cannot disagree."""
    parser = get_adapter(fixture.vendor).stream_parser()
    events = [
        e for chunk in _chunks(fixture.body(), set(range(50, len(fixture.body()), 50))) for e in parser.feed(chunk)
    ]
    events += parser.finish()
    completion = parser.completion()
    text = "".join(e.text for e in events if isinstance(e, TextDelta) and not e.refusal)
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    ends = [(e.id, e.name, e.arguments) for e in events if isinstance(e, ToolCallEnd)]
    assert text == completion.text()
    assert reasoning == completion.reasoning()
    assert ends == [(c.id, c.name, c.arguments) for c in completion.tool_calls()]


def test_a_wrong_expectation_fails() -> None:
    """The comparison can fail: a corrupted recording no longer matches its expected result."""
    fixture = next(f for f in STREAMED if f.vendor == "anthropic" and f.expected()["text"])
    body = fixture.body().replace(b'"text_delta","text":"', b'"text_delta","text":"X', 1)
    got = replay(fixture.vendor, body).summary()
    assert subset(got, fixture.expected()) != fixture.expected()


def test_deltas_of_one_part_within_a_chunk_come_as_one_event() -> None:
    """Coalescing: per fed chunk, consecutive deltas of a part are one event with the joined text;
    anything in between (a new part, a tool call) keeps them apart; earlier events never change."""
    parser = get_adapter("anthropic").stream_parser()

    def sse(event: dict[str, object]) -> bytes:
        return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()

    def text(index: int, piece: str) -> bytes:
        return sse({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}})

    start = sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    first = parser.feed(start + text(0, "Hel") + text(0, "lo") + text(0, ", "))
    assert [(e.type, e.text) for e in first] == [("text_delta", "Hello, ")]
    tool = sse({"type": "content_block_start", "index": 1,
                "content_block": {"type": "tool_use", "id": "t1", "name": "f", "input": {}}})
    args = [sse({"type": "content_block_delta", "index": 1,
                 "delta": {"type": "input_json_delta", "partial_json": piece}}) for piece in ('{"a"', ": 1}")]
    second = parser.feed(text(0, "wor") + text(0, "ld") + tool + args[0] + args[1] + sse(
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}) + text(2, "!"))
    assert [(e.type, getattr(e, "text", getattr(e, "delta", None))) for e in second] == [
        ("text_delta", "world"),
        ("tool_call_start", None),
        ("tool_call_args_delta", '{"a": 1}'),
        ("text_delta", "!"),
    ]
    assert first[0].text == "Hello, "  # handed out in an earlier chunk: left as it was
    parser.finish()
    assert parser.completion().text() == "Hello, world!"


def test_usage_is_an_event_only_when_it_changes() -> None:
    """Gemini repeats usageMetadata in every chunk: one event per change, the last value kept."""
    parser = get_adapter("gemini").stream_parser()

    def chunk(text: str, prompt: int, output: int | None) -> bytes:
        usage = {"promptTokenCount": prompt, **({"candidatesTokenCount": output} if output else {})}
        payload = {"candidates": [{"content": {"parts": [{"text": text}], "role": "model"}}], "usageMetadata": usage}
        return b"data: " + json.dumps(payload).encode() + b"\r\n\r\n"

    usages = []
    for piece in (chunk("a", 5, None), chunk("b", 5, None), chunk("c", 5, None), chunk("d", 5, 3)):
        usages += [(e.usage.input_tokens, e.usage.output_tokens) for e in parser.feed(piece) if e.type == "usage"]
    parser.finish()
    assert usages == [(5, None), (5, 3)]
    assert parser.completion().usage.output_tokens == 3 and parser.completion().text() == "abcd"


@pytest.mark.parametrize(
    ("vendor", "usual", "malformed"),
    [
        ("openai", b'data: {"choices":[{"index":0,"delta":{"content":"%s"}}]}\n\n', b"data: {oops\n\n"),
        ("anthropic", b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
         b'"delta":{"type":"text_delta","text":"%s"}}\n\n', b"event: ping\ndata: {oops\n\n"),
        ("gemini", b'data: {"candidates":[{"content":{"parts":[{"text":"%s"}]}}]}\r\n\r\n', b"data: {oops\r\n\r\n"),
        ("ollama", b'{"model":"m","message":{"role":"assistant","content":"%s"},"done":false}\n', b"{oops\n"),
    ],
)
def test_a_malformed_event_after_text_in_the_same_chunk_keeps_that_text(
    vendor: str, usual: bytes, malformed: bytes
) -> None:
    """Text deltas are gathered per chunk before they reach the parts manager: an event that fails
    to parse later in the same chunk must not lose them."""
    parser = get_adapter(vendor).stream_parser()
    if vendor == "anthropic":
        parser.feed(b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
                    b'"content_block":{"type":"text","text":""}}\n\n')
    with pytest.raises(StreamFormatError, match="oops"):
        parser.feed(usual % b"Hel" + usual % b"lo" + malformed + usual % b"!")
    assert parser.completion(incomplete=True).text() == "Hello"


@pytest.mark.parametrize(
    ("vendor", "before", "odd", "named"),
    [
        # JSON, but missing what the handler reads
        ("anthropic", b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
         b'"delta":{"type":"text_delta","text":"Hello"}}\n\n',
         b'event: content_block_start\ndata: {"type":"content_block_start","content_block":{"type":"text"}}\n\n',
         r"anthropic: an event this parser cannot read \(KeyError 'index'\): \{\"type\": \"content_block_start\""),
        ("openai-responses", b'data: {"type":"response.output_text.delta","item_id":"msg_1","delta":"Hello"}\n\n',
         b'data: {"type":"response.output_text.delta","delta":"x"}\n\n',
         r"openai-responses: an event this parser cannot read \(KeyError 'item_id'\)"),
        # arguments for a call never announced
        ("openai-responses", b'data: {"type":"response.output_text.delta","item_id":"msg_1","delta":"Hello"}\n\n',
         b'data: {"type":"response.function_call_arguments.delta","item_id":"fc_9","output_index":0,"delta":"{}"}\n\n',
         r"openai-responses: arguments for function call 'fc_9', which the stream never started"),
    ],
    ids=["anthropic-missing-index", "responses-missing-item", "responses-unannounced-call"],
)
def test_an_event_of_another_shape_is_a_stream_format_error_that_keeps_the_text_before_it(
    vendor: str, before: bytes, odd: bytes, named: str
) -> None:
    """Bad input gets a clear error naming the vendor and the event, never a bare KeyError."""
    parser = get_adapter(vendor).stream_parser()
    with pytest.raises(StreamFormatError, match=named):
        parser.feed(before + odd)
    assert parser.completion(incomplete=True).text() == "Hello"
