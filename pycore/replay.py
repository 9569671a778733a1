"""Replay a recorded response body through an adapter: what the CLI and the fixture tests use.

The body is fed to the vendor's parser exactly as the network would deliver it (in pieces of
``chunk_size`` bytes when asked), so a user can report a vendor's odd stream with one command.
"""

from __future__ import annotations

import json
from typing import Literal

from pycore.adapters import get_adapter
from pycore.messages import Completion

Mode = Literal["auto", "stream", "json"]


def looks_streamed(vendor: str, body: bytes) -> bool:
    """SSE bodies start with a field or a comment; an Ollama stream is JSON, one object per line."""
    head = body.lstrip(b"\xef\xbb\xbf \t\r\n")
    if get_adapter(vendor).stream_parser().ndjson:  # one JSON object per line (Ollama)
        try:
            json.loads(head.split(b"\n", 1)[0])
        except ValueError:
            return False  # a pretty-printed single document
        return True  # a one-line body is also a valid one-line stream
    return head.startswith((b"data:", b"event:", b":", b"id:", b"retry:"))


def replay(
    vendor: str, body: bytes, *, status: int = 200, chunk_size: int | None = None, mode: Mode = "auto"
) -> Completion:
    adapter = get_adapter(vendor)
    if status >= 400:
        return adapter.error_completion(status, {}, body)
    streamed = mode == "stream" or (mode == "auto" and looks_streamed(vendor, body))
    if not streamed:
        return adapter.parse_response(body)
    parser = adapter.stream_parser(status=status)
    size = chunk_size or max(len(body), 1)
    for start in range(0, len(body), size):
        parser.feed(body[start : start + size])
    parser.finish()
    return parser.completion()
