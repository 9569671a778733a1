"""SSE and NDJSON decoders (T-V5): each spec quirk gets a small test naming what it guards against."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycore.decoders import NDJSONDecoder, SSEDecoder, SSEEvent
from pycore.exceptions import StreamFormatError

pytestmark = pytest.mark.pyodide


def decode(*chunks: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events = [e for chunk in chunks for e in decoder.feed(chunk)]
    return events + decoder.finish()


def pairs(events: list[SSEEvent]) -> list[tuple[str, str]]:
    return [(e.event, e.data) for e in events]


def test_basic_event_with_type_and_data() -> None:
    assert pairs(decode(b'event: completion\ndata: {"foo":true}\n\n')) == [("completion", '{"foo":true}')]


def test_data_without_event_is_a_message() -> None:
    assert pairs(decode(b'data: {"foo":true}\n\n')) == [("message", '{"foo":true}')]


def test_event_without_data_is_not_dispatched() -> None:
    # WHATWG: an empty data buffer resets and dispatches nothing. The SDKs yield an empty "ping";
    # nothing we parse depends on such events, so we follow the spec.
    assert decode(b"event: ping\n\n") == []


def test_multiple_events_and_the_type_does_not_leak_into_the_next() -> None:
    got = decode(b"event: a\ndata: 1\n\ndata: 2\n\n")
    assert pairs(got) == [("a", "1"), ("message", "2")]


def test_multi_line_data_is_joined_with_newline() -> None:
    assert pairs(decode(b'data: {\ndata: "foo":\ndata: true}\n\n')) == [("message", '{\n"foo":\ntrue}')]


def test_several_blank_lines_dispatch_once() -> None:
    assert pairs(decode(b"data: x\n\n\n\n\ndata: y\n\n")) == [("message", "x"), ("message", "y")]


def test_escaped_newlines_inside_json_are_not_line_ends() -> None:
    payload = json.dumps({"content": "line1\n\nline2"})
    (event,) = decode(f"data: {payload}\n\n".encode())
    assert json.loads(event.data)["content"] == "line1\n\nline2"


def test_u2028_inside_json_is_not_a_line_end() -> None:
    # Guards against str.splitlines(), which splits on U+2028/U+2029/NEL as well.
    (event,) = decode('data: {"t":"a\u2028b\u2029c\x85d"}\n\n'.encode())
    assert json.loads(event.data)["t"] == "a\u2028b\u2029c\x85d"


def test_multibyte_character_split_across_chunks() -> None:
    raw = 'data: {"t":"日本"}\n\n'.encode()
    cut = raw.index("日".encode()) + 1
    assert pairs(decode(raw[:cut], raw[cut:])) == [("message", '{"t":"日本"}')]


@pytest.mark.parametrize("end", [b"\r\n", b"\r", b"\n"])
def test_every_line_ending(end: bytes) -> None:
    raw = b"event: a" + end + b"data: 1" + end + end + b"data: 2" + end + end
    assert pairs(decode(raw)) == [("a", "1"), ("message", "2")]


def test_crlf_split_between_chunks_is_one_line_end() -> None:
    # A CR ending one chunk and the LF starting the next must not count as two line ends (= a dispatch).
    assert pairs(decode(b"data: a\r", b"\ndata: b\r\n\r\n")) == [("message", "a\nb")]


def test_lone_cr_at_end_of_chunk_still_ends_the_line() -> None:
    assert pairs(decode(b"data: a\r", b"\r")) == [("message", "a")]


def test_comments_are_ignored() -> None:
    assert pairs(decode(b": keep-alive\n\n:\ndata: x\n: another\n\n")) == [("message", "x")]


def test_only_one_space_after_colon_is_dropped_and_no_colon_means_empty_value() -> None:
    assert pairs(decode(b"data:  two\n\ndata\ndata\n\n")) == [("message", " two"), ("message", "\n")]


def test_id_and_retry_fields() -> None:
    events = decode(b"id: 7\nretry: 3000\ndata: a\n\nretry: soon\ndata: b\n\nid: x\0y\ndata: c\n\n")
    assert [(e.id, e.retry) for e in events] == [("7", 3000), ("7", 3000), ("7", 3000)]


def test_done_sentinel_is_plain_data() -> None:
    assert pairs(decode(b"data: [DONE]\n\n")) == [("message", "[DONE]")]


def test_leading_bom_is_dropped_once() -> None:
    assert pairs(decode(b"\xef\xbb\xbfdata: a\n\n")) == [("message", "a")]


def test_a_mark_after_the_start_is_kept_even_in_the_last_event() -> None:
    # U+FEFF is dropped only where the stream starts: later, "\ufeffdata" is an unknown field.
    assert pairs(decode(b"data: a\n\n", b"\xef\xbb\xbfdata: b\n\n")) == [("message", "a")]
    assert pairs(decode(b"data: a\n\n", b"\xef\xbb\xbfdata: b\n\r")) == [("message", "a")]  # flushed by finish()
    assert pairs(decode(b"\xef\xbb\xbfdata: a\n\r")) == [("message", "a")]


def test_unterminated_last_event_is_discarded() -> None:
    # A connection cut mid-event must not deliver half an event.
    assert decode(b'data: a\n\ndata: {"half') == [SSEEvent("message", "a")]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_chunking_gives_the_same_events(data: st.DataObject) -> None:
    raw = "event: x\r\ndata: é日🙂\r\n\r\n: c\rdata: 2\r\rdata: 3\n\n".encode()
    cuts = sorted(data.draw(st.sets(st.integers(1, len(raw) - 1), max_size=12)))
    chunks = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    assert pairs(decode(*chunks)) == [("x", "é日🙂"), ("message", "2"), ("message", "3")]


def test_a_long_line_in_small_pieces_then_a_cr_only_blank_line_at_the_very_end() -> None:
    # The unfinished line waits while pieces without a line end arrive; a final lone CR is a line end.
    value = "x" * 200_000
    raw = f"id: 7\r\ndata: {value}\r\r".encode()
    got = decode(*[raw[i : i + 1000] for i in range(0, len(raw), 1000)])
    assert [(e.event, e.data, e.id) for e in got] == [("message", value, "7")]


def test_ndjson_lines_blank_lines_and_final_line_without_newline() -> None:
    # Lines, not yet JSON: the stream parser reads them (a CR before the LF stays, as JSON whitespace).
    decoder = NDJSONDecoder()
    got = decoder.feed(b'{"a":1}\n\n \t\n{"b":"\xe6\x97') + decoder.feed(b'\xa5"}\r\n{"c":3}')
    assert got + decoder.finish() == ['{"a":1}', '{"b":"日"}\r', '{"c":3}']


def test_ndjson_invalid_line_raises_stream_format_error() -> None:
    from pycore.adapters import get_adapter

    with pytest.raises(StreamFormatError, match="invalid JSON line in NDJSON stream: 'not json'"):
        get_adapter("ollama").stream_parser().feed(b"not json\n")


def reference_events(raw: bytes) -> list[tuple[str, str, str | None, int | None]]:
    """The WHATWG rules read literally, one line at a time over the whole body: what the decoder's
    shortcuts (whole events read at once, CRLF kept until the end) must agree with."""
    text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out, event, data, last_id, retry = [], "", [], None, None
    for line in text.split("\n")[:-1]:  # the unterminated rest is discarded
        name, colon, value = line.partition(":")
        value = value[1:] if colon and value[:1] == " " else value
        if not line:
            if data:
                out.append((event or "message", "\n".join(data), last_id, retry))
            event, data = "", []
        elif not name:
            continue  # a comment
        elif name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            retry = int(value)
    return out


_LINES = st.sampled_from(
    ["data: x", "data:y", "data: {\"t\": \"日本🙂\"}", "data", "data:  two", "event: delta", "event:e", "event: ",
     "id: 7", "retry: 30", ": ping", "", "", "", "other: 1", "\ufeffdata: bom"]
)
_ENDS = st.sampled_from(["\n", "\n", "\r\n", "\r\n", "\r"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_LINES, _ENDS), max_size=30), st.booleans(), st.data())
def test_any_stream_at_any_chunking_matches_the_spec_read_line_by_line(
    lines: list[tuple[str, str]], bom: bool, data: st.DataObject
) -> None:
    raw = (("\ufeff" if bom else "") + "".join(line + end for line, end in lines)).encode()
    cuts = sorted(data.draw(st.sets(st.integers(1, max(len(raw) - 1, 1)), max_size=10))) if len(raw) > 1 else []
    chunks = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    assert [(e.event, e.data, e.id, e.retry) for e in decode(*chunks)] == reference_events(raw)


# -- T-Z3: an event or a line that never ends -----------------------------------------------------------------

MIB = 1024 * 1024


def endless(decoder: SSEDecoder | NDJSONDecoder, head: bytes, piece: bytes = b"x" * MIB) -> tuple[int, Exception]:
    """Feed ``head`` then ``piece`` after ``piece`` with no boundary: how many bytes went in before the error."""
    fed = len(head)
    decoder.feed(head)
    for _ in range(200):
        try:
            decoder.feed(piece)
        except StreamFormatError as e:
            return fed + len(piece), e
        fed += len(piece)
    raise AssertionError("200 MiB of one unfinished event, and no error")


@pytest.mark.parametrize("make, head, what", [
    (SSEDecoder, b"data: ", "SSE event"),
    (SSEDecoder, b": keep-alive comment that goes on ", "SSE event"),
    (NDJSONDecoder, b'{"text": "', "NDJSON line"),
])
def test_z3_an_unending_unit_is_cut_off_past_the_cap(make: type, head: bytes, what: str) -> None:
    fed, error = endless(make(), head)
    assert 32 * MIB < fed <= 33 * MIB  # the cap, plus at most the chunk that crossed it
    assert f"{what} grew past 32 MiB" in str(error) and "cut off" in str(error)


def test_z3_the_caps_are_named_and_adjustable() -> None:
    from pycore import decoders

    assert decoders.MAX_UNIT_BYTES == 32 * MIB
    fed, error = endless(SSEDecoder(max_event_bytes=1000), b"data: ", b"y" * 300)
    assert 1000 < fed <= 1300 and "1000 bytes" in str(error)
    fed, error = endless(NDJSONDecoder(max_line_bytes=1000), b"", b"y" * 300)
    assert 1000 < fed <= 1300


def test_z3_what_arrived_before_the_endless_event_is_kept() -> None:
    decoder = SSEDecoder(max_event_bytes=1000)
    assert pairs(decoder.feed(b"data: a\n\ndata: b\n\n" + b"data: " + b"z" * 2000)) == [("message", "a"),
                                                                                      ("message", "b")]
    with pytest.raises(StreamFormatError, match="SSE event grew past 1000 bytes"):
        decoder.feed(b"more")
    with pytest.raises(StreamFormatError):
        decoder.finish()  # still refused: the stream is cut off at the endless event
    lines = NDJSONDecoder(max_line_bytes=1000)
    assert lines.feed(b'{"a": 1}\n' + b"[" * 2000) == ['{"a": 1}']
    with pytest.raises(StreamFormatError, match="NDJSON line"):
        lines.finish()


def test_z3_events_up_to_the_cap_still_pass_in_any_pieces() -> None:
    value = "v" * 5000
    raw = f"data: {value}\n\n".encode()
    decoder = SSEDecoder(max_event_bytes=len(raw))
    got = [e for i in range(0, len(raw), 7) for e in decoder.feed(raw[i:i + 7])]
    assert pairs(got + decoder.finish()) == [("message", value)]


def test_z3_a_vendor_stream_keeps_its_text_when_an_endless_event_follows() -> None:
    from pycore.adapters import get_adapter

    parser = get_adapter("openai").stream_parser()
    delta = {"id": "c", "object": "chat.completion.chunk", "model": "m",
             "choices": [{"index": 0, "delta": {"content": "Hello"}, "finish_reason": None}]}
    parser.feed(f"data: {json.dumps(delta)}\n\n".encode())
    with pytest.raises(StreamFormatError, match="SSE event grew past 32 MiB"):
        for _ in range(40):
            parser.feed(b"data: " + b"x" * MIB)
    assert parser.completion(incomplete=True).text() == "Hello"
