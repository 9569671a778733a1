"""A transport that serves recorded responses: the tests' stand-in for the network, in both runtimes.

Each :class:`Recording` is served once, in order (the last one repeats). Bodies go out in pieces
of ``chunk_size`` bytes; ``cut_after`` drops the connection after that many body bytes, the way a
flaky network does. Every request sent is kept in ``requests`` for the tests to inspect.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from pycore.exceptions import APIConnectionError
from pycore.http.base import Request, Response, Transport


@dataclass
class Recording:
    body: bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    chunk_size: int | None = None
    cut_after: int | None = None  # drop the connection after this many body bytes
    connect_error: bool = False  # fail before any response
    delay: float = 0.0  # pause between chunks, to give Stop something to interrupt


class ReplayResponse(Response):
    def __init__(self, recording: Recording) -> None:
        self._rec = recording
        self.status = recording.status
        self.headers = {"content-type": recording.content_type, **{k.lower(): v for k, v in recording.headers.items()}}
        self.closed = False

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        body, size = self._rec.body, self._rec.chunk_size or max(len(self._rec.body), 1)
        limit = len(body) if self._rec.cut_after is None else min(self._rec.cut_after, len(body))
        for start in range(0, limit, size):
            if self.closed:
                return
            if self._rec.delay:
                await asyncio.sleep(self._rec.delay)
            yield body[start : min(start + size, limit)]
        if self._rec.cut_after is not None:
            raise APIConnectionError("connection dropped mid-stream (replay)")

    async def aclose(self) -> None:
        self.closed = True


class ReplayTransport(Transport):
    def __init__(self, recordings: Sequence[Recording]) -> None:
        if not recordings:
            raise ValueError("ReplayTransport needs at least one recording")
        self.recordings = list(recordings)
        self.requests: list[Request] = []
        self.responses: list[ReplayResponse] = []

    async def send(self, request: Request) -> Response:
        self.requests.append(request)
        recording = self.recordings[min(len(self.requests), len(self.recordings)) - 1]
        if recording.connect_error:
            raise APIConnectionError("connection refused (replay)")
        response = ReplayResponse(recording)
        self.responses.append(response)
        return response
