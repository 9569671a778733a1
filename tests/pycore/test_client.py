"""ChatClient over the replay transport: streaming, typed errors, retries, Stop, cut-offs (T-V4, T-V6).

Runs in both runtimes: the replay transport needs no sockets.
"""

from __future__ import annotations

import asyncio

import pytest
from vendor_fixtures import FIXTURES, Fixture, consume_until_text, fixture, no_sleep, subset

from pycore.adapters import get_adapter
from pycore.adapters.fake import FakeAdapter, FakeTransport
from pycore.client import ChatClient
from pycore.exceptions import APIStatusError, OverloadedError, RateLimitError
from pycore.http.replay import Recording, ReplayTransport
from pycore.messages import ChatRequest, ErrorEvent, Message, ToolCallPart, Usage

pytestmark = pytest.mark.pyodide

REQUEST = ChatRequest(model="m", messages=[Message.user("hi")])


def recording(f: Fixture, **kwargs: object) -> Recording:
    return Recording(f.body(), status=f.status, content_type=f.content_type, **kwargs)  # type: ignore[arg-type]


def client_for(f: Fixture, recordings: list[Recording]) -> tuple[ChatClient, ReplayTransport]:
    transport = ReplayTransport(recordings)
    return ChatClient(get_adapter(f.vendor, api_key="k"), transport, sleep=no_sleep), transport


@pytest.mark.parametrize("f", [f for f in FIXTURES if f.streamed and f.status == 200], ids=str)
async def test_stream_through_the_client_gives_the_expected_result(f: Fixture) -> None:
    client, _ = client_for(f, [recording(f, chunk_size=13)])
    stream = client.stream(REQUEST)
    events = [e async for e in stream]
    assert stream.completion is not None
    expected = f.expected()
    assert subset(stream.completion.summary(), expected) == expected
    assert stream.completion.incomplete == (expected["error"] is not None)
    assert [e for e in events if isinstance(e, ErrorEvent)] == ([] if expected["error"] is None else events[-1:])


@pytest.mark.parametrize("f", [f for f in FIXTURES if f.status >= 400], ids=str)
async def test_error_statuses_raise_the_typed_error(f: Fixture) -> None:
    client, transport = client_for(f, [recording(f)])
    with pytest.raises(APIStatusError) as caught:
        await client.complete(REQUEST)
    expected = f.expected()["error"]
    assert (caught.value.status, caught.value.type, caught.value.vendor_message) == (
        expected["status"],
        expected["type"],
        expected["message"],
    )
    retried = f.status in (408, 409, 429) or f.status >= 500
    assert len(transport.requests) == (3 if retried else 1)


async def test_a_529_then_success_is_retried_transparently() -> None:
    overloaded, ok = fixture("anthropic/error-529-overloaded.json"), fixture("anthropic/stream-text.sse")
    client, transport = client_for(ok, [recording(overloaded), recording(ok)])
    stream = client.stream(REQUEST)
    [e async for e in stream]
    assert stream.completion and stream.completion.text() == "[12345,67890]"
    assert len(transport.requests) == 2
    assert transport.responses[0].closed


async def test_three_529s_raise_overloaded() -> None:
    overloaded = fixture("anthropic/error-529-overloaded.json")
    client, _ = client_for(overloaded, [recording(overloaded)])
    with pytest.raises(OverloadedError):
        [e async for e in client.stream(REQUEST)]


async def test_mid_stream_error_is_shown_partial_kept_and_not_retried() -> None:  # T-V4
    f = fixture("anthropic/stream-midstream-overloaded.sse")
    client, transport = client_for(f, [recording(f, chunk_size=40)])
    stream = client.stream(REQUEST)
    events = [e async for e in stream]
    assert isinstance(events[-1], ErrorEvent) and events[-1].error.type == "overloaded_error"
    assert stream.completion and stream.completion.incomplete and stream.completion.text() == "[12345,67890]"
    assert len(transport.requests) == 1


async def test_connection_dropped_mid_stream_keeps_what_arrived() -> None:
    f = fixture("openai/chat-stream-text-usage.sse")
    body = f.body()
    cut = body.index(b"London")  # the stream breaks before the last words
    client, transport = client_for(f, [recording(f, chunk_size=50, cut_after=cut)])
    stream = client.stream(REQUEST)
    events = [e async for e in stream]
    assert stream.completion is not None and stream.completion.incomplete
    assert stream.completion.text() and "London" not in stream.completion.text()
    assert "The capital of the UK".startswith(stream.completion.text()[:10])
    assert events[-1].type == "error" and events[-1].error.type == "connection_error"
    assert len(transport.requests) == 1  # never retried after the first byte


async def test_stop_cancels_mid_stream_and_keeps_the_partial_answer() -> None:  # T-V6 (logic; fetch in e2e)
    f = fixture("anthropic/stream-thinking.sse")
    client, transport = client_for(f, [recording(f, chunk_size=200, delay=0.005)])
    stream = client.stream(REQUEST)
    task, seen = await consume_until_text(stream)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert stream.aborted and stream.completion is not None and stream.completion.incomplete
    assert stream.completion.text() == "".join(seen) != f.expected()["text"]
    assert transport.responses[0].closed


async def test_fake_model_drives_a_tool_turn_then_an_answer() -> None:
    call = ToolCallPart(id="c1", name="search", arguments={"q": "x"})
    transport = FakeTransport(
        [
            ["Let me look.", call, Usage(input_tokens=3, output_tokens=4)],
            lambda request: [f"Seen {len(request.messages)} messages."],
        ]
    )
    client = ChatClient(FakeAdapter(), transport)
    first = client.stream(REQUEST)
    events = [e async for e in first]
    assert first.completion and first.completion.text() == "Let me look."
    assert first.completion.tool_calls()[0].arguments == {"q": "x"}
    assert first.completion.finish_reason == "tool_calls" and events[-1].type == "finish"
    second = await client.complete(
        REQUEST.model_copy(update={"messages": [*REQUEST.messages, first.completion.message]})
    )
    assert second.text() == "Seen 2 messages." and second.finish_reason == "stop"


async def test_rate_limit_error_carries_lower_cased_headers() -> None:
    f = fixture("openai/error-429-insufficient-quota.json")
    transport = ReplayTransport(
        [Recording(f.body(), status=429, headers={"Retry-After-Ms": "1", "X-Request-ID": "abc"})]
    )
    client = ChatClient(get_adapter("openai", api_key="k"), transport, sleep=no_sleep)
    with pytest.raises(RateLimitError) as caught:
        await client.complete(REQUEST)
    assert caught.value.headers["x-request-id"] == "abc"
