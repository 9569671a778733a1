"""Long streams for bench/stream, grown from real recordings in tests/fixtures/vendors.

Each recording is cut into its events (SSE: blank-line separated; NDJSON: lines); the first two and
last three are kept as they are and the ones between repeat, in order, until the stream has the
requested number of events. The bytes of every event are the vendor's own.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "vendors"

SOURCES = {
    "openai": "openai/chat-stream-text-usage.sse",
    "openai-responses": "openai/responses-stream-reasoning-summary.sse",
    "anthropic": "anthropic/stream-text.sse",
    "gemini": "gemini/stream-text.sse",
    "ollama": "ollama/chat-stream-text.ndjson",
}


def events_of(body: bytes, ndjson: bool) -> list[bytes]:
    if ndjson:
        return [line + b"\n" for line in body.split(b"\n") if line.strip()]
    sep = b"\r\n\r\n" if b"\r\n\r\n" in body else b"\n\n"
    return [part + sep for part in body.split(sep) if part.strip()]


def grow(vendor: str, count: int) -> bytes:
    body = (FIXTURES / SOURCES[vendor]).read_bytes()
    events = events_of(body, ndjson=vendor == "ollama")
    keep = min(2, len(events) // 3), min(3, len(events) // 3)
    head, middle, tail = events[: keep[0]], events[keep[0] : len(events) - keep[1]], events[len(events) - keep[1] :]
    repeated = [middle[i % len(middle)] for i in range(max(count - len(head) - len(tail), 0))]
    return b"".join(head + repeated + tail)
