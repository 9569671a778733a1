"""The fetch transport inside Pyodide (skipped in CPython): a recorded stream served from a
``data:`` URL goes through the real ``fetch`` + ReadableStream reader, no sockets needed."""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator

import pytest
from vendor_fixtures import FIXTURES, subset

from pycore.adapters import get_adapter
from pycore.http import Request

pytestmark = [
    pytest.mark.pyodide,
    pytest.mark.skipif(sys.platform != "emscripten", reason="the browser's fetch exists only in Pyodide"),
]


@pytest.fixture(params=["pump", "own reader"])
def body_reader(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each way the body is read: the worker's pump (``web/body_pump.js``, registered as the worker does it by
    tests/pyodide/run_pytest.mjs), and the body's own reader, where no pump was registered."""
    from pyodide.ffi import register_js_module, unregister_js_module

    from pycore.http.fetch import PUMP

    pump = __import__(PUMP)
    if request.param == "pump":
        yield request.param
        return
    unregister_js_module(PUMP)
    sys.modules.pop(PUMP, None)
    try:
        yield request.param
    finally:
        register_js_module(PUMP, pump)


async def test_fetch_streams_a_recording_to_the_parser(body_reader: str) -> None:
    from pycore.http.fetch import FetchTransport

    f = next(f for f in FIXTURES if f.file == "anthropic/stream-thinking-signature.sse")
    url = "data:text/event-stream;base64," + base64.b64encode(f.body()).decode()
    response = await FetchTransport().send(Request("GET", url, {"accept": "text/event-stream"}))
    assert response.status == 200 and response.headers["content-type"].startswith("text/event-stream")
    parser = get_adapter("anthropic").stream_parser()
    async for chunk in response.aiter_bytes():
        parser.feed(chunk)
    parser.finish()
    await response.aclose()
    expected = f.expected()
    assert subset(parser.completion().summary(), expected) == expected


async def test_aclose_before_reading_aborts_quietly() -> None:
    from pycore.http.fetch import FetchTransport

    response = await FetchTransport().send(Request("GET", "data:text/plain,hello"))
    await response.aclose()
    await response.aclose()  # idempotent


def _stalling_response(first: bytes) -> tuple[object, object]:
    """A real browser Response whose body sends ``first`` and then nothing, never closing."""
    import js
    from pyodide.ffi import create_proxy, to_js

    def start(controller: object) -> None:
        controller.enqueue(to_js(first))  # type: ignore[attr-defined]

    source = to_js({"start": create_proxy(start)}, dict_converter=js.Object.fromEntries)
    headers = {"content-type": "text/event-stream"}
    init = to_js({"status": 200, "headers": headers}, dict_converter=js.Object.fromEntries)
    return js.Response.new(js.ReadableStream.new(source), init), js.AbortController.new()


async def test_a_stalled_body_times_out_aborts_and_keeps_what_arrived() -> None:
    """V5: a body that stops arriving ends the stream as cut off after the timeout, never hangs."""
    import time

    from pycore.client import ChatClient
    from pycore.exceptions import APITimeoutError
    from pycore.http import Transport
    from pycore.http.fetch import FetchResponse
    from pycore.messages import ChatRequest, Message

    f = next(f for f in FIXTURES if f.file == "anthropic/stream-thinking.sse")
    first = f.body()[:3000]
    response, controller = _stalling_response(first)
    body = FetchResponse(response, controller, read_timeout=0.2)
    chunks, started = [], time.monotonic()
    with pytest.raises(APITimeoutError, match="stalled"):
        async for chunk in body.aiter_bytes():
            chunks.append(chunk)
    assert b"".join(chunks) == first and time.monotonic() - started < 5
    assert controller.signal.aborted

    class Stalling(Transport):
        async def send(self, request: Request) -> FetchResponse:
            js_response, js_controller = _stalling_response(first)
            return FetchResponse(js_response, js_controller, read_timeout=0.2)

    client = ChatClient(get_adapter("anthropic", api_key="k"), Stalling())
    stream = client.stream(ChatRequest(model="m", messages=[Message.user("hi")]))
    events = [event async for event in stream]
    assert events[-1].type == "error" and stream.completion.incomplete
    assert stream.completion.reasoning() and f.expected()["reasoning"].startswith(stream.completion.reasoning())
