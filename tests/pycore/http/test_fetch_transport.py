"""The fetch transport inside Pyodide (skipped in CPython): a recorded stream served from a
``data:`` URL goes through the real ``fetch`` + ReadableStream reader, no sockets needed."""

from __future__ import annotations

import base64
import sys

import pytest
from vendor_fixtures import FIXTURES, subset

from pycore.adapters import get_adapter
from pycore.http import Request

pytestmark = [
    pytest.mark.pyodide,
    pytest.mark.skipif(sys.platform != "emscripten", reason="the browser's fetch exists only in Pyodide"),
]


async def test_fetch_streams_a_recording_to_the_parser() -> None:
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
