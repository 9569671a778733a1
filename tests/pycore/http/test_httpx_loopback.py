"""The httpx transport against a loopback server replaying recordings with their real status codes
and content types: streaming, typed errors, retries, Stop and a connection dropped mid-stream.
CPython only (sockets, threads, httpx)."""

from __future__ import annotations

import asyncio
import time

import pytest
from loopback import LoopbackServer
from vendor_fixtures import FIXTURES, Fixture, consume_until_text, fixture, no_sleep, subset

from pycore.adapters import get_adapter
from pycore.client import ChatClient
from pycore.exceptions import APIConnectionError, APIStatusError
from pycore.http import Request
from pycore.http.httpx import HttpxTransport
from pycore.messages import ChatRequest, Message

REQUEST = ChatRequest(model="m", messages=[Message.user("hi")])


@pytest.fixture(scope="module")
def server() -> LoopbackServer:
    with LoopbackServer() as running:
        yield running


class Routed(HttpxTransport):
    """Sends every request to one loopback path, whatever URL the adapter built."""

    def __init__(self, url: str, timeout: float = 5.0) -> None:
        super().__init__()
        self.url = url
        self.timeout = timeout

    async def send(self, request: Request) -> object:
        return await super().send(Request(request.method, self.url, request.headers, request.body, self.timeout))


def client(server: LoopbackServer, f: Fixture, route: str) -> ChatClient:
    return ChatClient(get_adapter(f.vendor, api_key="k"), Routed(f"{server.url}/{route}/{f.file}"), sleep=no_sleep)


@pytest.mark.parametrize("f", FIXTURES, ids=str)
async def test_every_recording_over_real_http(server: LoopbackServer, f: Fixture) -> None:
    c = client(server, f, "replay")
    expected = f.expected()
    try:
        if f.streamed:
            stream = c.stream(REQUEST)
            [e async for e in stream]
            got = stream.completion.summary()
        else:
            got = (await c.complete(REQUEST)).summary()
    except APIStatusError as e:
        got = {**expected, "error": {"status": e.status, "type": e.type, "message": e.vendor_message}}
    finally:
        await c.transport.aclose()
    assert subset(got, expected) == expected


async def test_retries_503_then_streams(server: LoopbackServer) -> None:
    f = fixture("gemini/stream-text.sse")
    c = client(server, f, "flaky/2")
    stream = c.stream(REQUEST)
    [e async for e in stream]
    await c.transport.aclose()
    assert stream.completion.text() == f.expected()["text"]
    assert server.hits[f"/flaky/2/{f.file}"] == 3


async def test_connection_dropped_mid_stream(server: LoopbackServer) -> None:
    f = fixture("anthropic/stream-thinking.sse")
    c = client(server, f, "cut/3000")
    stream = c.stream(REQUEST)
    events = [e async for e in stream]
    await c.transport.aclose()
    assert stream.completion.incomplete and events[-1].type == "error"
    assert stream.completion.reasoning() and f.expected()["reasoning"].startswith(stream.completion.reasoning())
    assert server.hits[f"/cut/3000/{f.file}"] == 1


async def test_stop_aborts_the_http_request_quickly(server: LoopbackServer) -> None:
    f = fixture("anthropic/stream-thinking.sse")
    c = client(server, f, "slow")
    stream = c.stream(REQUEST)
    task, seen = await consume_until_text(stream, poll=0.005)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 0.1
    await c.transport.aclose()
    assert stream.completion.incomplete and stream.completion.text() == "".join(seen)
    assert await asyncio.to_thread(server.aborted.wait, 2.0)  # the server saw the client go away


async def test_refused_connection_is_a_connection_error() -> None:
    transport = HttpxTransport()
    with pytest.raises(APIConnectionError):
        await transport.send(Request("GET", "http://127.0.0.1:9/", timeout=2.0))
    await transport.aclose()


async def test_a_stalled_stream_ends_cut_off_with_what_arrived(server: LoopbackServer) -> None:
    """No byte for longer than the timeout: the stream ends as a dropped one would, not a hang."""
    f = fixture("anthropic/stream-thinking.sse")
    c = ChatClient(get_adapter(f.vendor, api_key="k"), Routed(f"{server.url}/stall/3000/{f.file}", 0.3), sleep=no_sleep)
    stream = c.stream(REQUEST)
    started = time.monotonic()
    events = [e async for e in stream]
    waited = time.monotonic() - started
    server.release.set()
    await c.transport.aclose()
    assert waited < 2.5, waited  # the server would have stalled for 3 s
    assert events[-1].type == "error" and events[-1].error.type == "connection_error"
    assert stream.completion.incomplete and stream.completion.reasoning()
    assert f.expected()["reasoning"].startswith(stream.completion.reasoning())


async def test_a_redirect_is_not_followed_and_the_key_stays_home() -> None:
    """V1: a 307 to another server is refused; that server never sees the request (nor its key)."""
    with LoopbackServer() as home, LoopbackServer() as elsewhere:
        port = elsewhere.server_address[1]
        adapter = get_adapter("openai", api_key="sk-test-redirect-0123456789", base_url=f"{home.url}/redirect/{port}")
        c = ChatClient(adapter, HttpxTransport(), sleep=no_sleep)
        with pytest.raises(APIStatusError) as caught:
            [e async for e in c.stream(REQUEST)]
        await c.transport.aclose()
    assert caught.value.status == 307 and caught.value.type == "redirect"
    assert f"127.0.0.1:{port}" in str(caught.value) and "sk-test" not in str(caught.value)
    assert sum(home.hits.values()) == 1 and sum(elsewhere.hits.values()) == 0


async def test_no_request_follows_a_redirect_unless_it_asks_and_then_like_fetch() -> None:
    """T-U1: a Request follows no redirect by default, in every transport (fetch: ``redirect: "manual"``); one that
    asks is followed by httpx as by fetch (``redirect: "follow"``), so the flag means the same in both."""
    assert Request("GET", "http://x/").follow_redirects is False
    name = FIXTURES[0].file
    with LoopbackServer() as home, LoopbackServer() as elsewhere:
        port = elsewhere.server_address[1]
        transport = HttpxTransport()
        kept = await transport.send(Request("GET", f"{home.url}/redirect/{port}/replay/{name}", {"x-api-key": "k"}))
        await kept.aclose()
        assert kept.status == 307 and kept.headers["location"].startswith(f"http://127.0.0.1:{port}/")
        assert sum(elsewhere.hits.values()) == 0
        followed = await transport.send(Request("GET", f"{home.url}/redirect/{port}/replay/{name}",
                                                follow_redirects=True))
        await followed.aclose()
        await transport.aclose()
    assert followed.status == FIXTURES[0].status and sum(elsewhere.hits.values()) == 1
