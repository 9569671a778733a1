"""The relay's HTTP front: request heads capped, each head given a deadline, open connections bounded (T-R21).

uvicorn's httptools protocol sets none of these: llhttp has no header size limit (tens of megabytes of
headers were buffered and served), uvicorn arms no timer before a connection's first response (a head
that never completes holds its connection forever: slowloris), and its ``limit_concurrency`` counts
half-sent connections too and then answers 503 to every *new* request, so a flood of them would lock the
page out instead of the flood. ``guarded_httptools`` subclasses the protocol and adds:

- a head (request line and headers) over ``max_head_bytes`` gets 431 and the connection closes. The parser
  is fed at most that many bytes of a head, so nothing past the cap is ever buffered;
- a head must be complete ``head_timeout`` seconds after the connection opened, or after its first byte
  on a kept-alive connection (silence between requests is uvicorn's keep-alive timeout); otherwise the
  connection closes, with a 408 if part of a head had arrived;
- at most ``max_connections`` connections. A new one beyond that pushes out the oldest connection whose
  head is not complete (that is what a flood is made of, and it never got to be a request), so a
  well-formed request still gets through; if every connection is serving a request, the new one is closed.

It hooks the parser's callbacks (``on_message_begin``, ``on_headers_complete``, ``on_message_complete``)
and asyncio's ``connection_made``/``data_received``/``connection_lost``. The h11 fallback (no httptools)
gets h11's own head cap only; ``python -m server`` says so when it starts.
"""

from __future__ import annotations

import asyncio
import http
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from server.config import FrontLimits

log = logging.getLogger("orizuru.relay")

REPORT_EVERY = 10.0  # seconds: refusals are summed up, a flood writes a few lines and not thousands


@dataclass
class Front:
    """The connections of one relay: all open ones, and (oldest first) those still waiting for a head."""

    limits: FrontLimits
    open: set[GuardedHttpTools] = field(default_factory=set)
    pending: dict[GuardedHttpTools, None] = field(default_factory=dict)
    refused: Counter[str] = field(default_factory=Counter)
    _report: asyncio.TimerHandle | None = None
    _reported_at: float = 0.0

    def admit(self, new: GuardedHttpTools) -> bool:
        """Makes room for ``new`` if it can; False if every connection is busy with a request."""
        if len(self.open) >= self.limits.max_connections:
            oldest = next(iter(self.pending), None)
            if oldest is None:
                self.note("connections closed at once: every one was serving a request")
                return False
            self.note("half-sent connections pushed out by newer ones")
            oldest.drop()
        self.open.add(new)
        return True

    def forget(self, protocol: GuardedHttpTools) -> None:
        self.open.discard(protocol)
        self.pending.pop(protocol, None)

    def note(self, what: str) -> None:
        self.refused[what] += 1
        now = time.monotonic()
        if now - self._reported_at >= REPORT_EVERY:
            self.report()
        elif self._report is None:
            self._report = asyncio.get_running_loop().call_later(REPORT_EVERY - (now - self._reported_at),
                                                                 self.report)

    def report(self) -> None:
        if self._report is not None:
            self._report.cancel()
            self._report = None
        self._reported_at = time.monotonic()
        if self.refused:
            log.warning("http front (max %d connections, %d-byte heads, %gs deadline): %s", self.limits.max_connections,
                        self.limits.max_head_bytes, self.limits.head_timeout,
                        ", ".join(f"{count} {what}" for what, count in self.refused.items()))
            self.refused.clear()


class GuardedHttpTools(HttpToolsProtocol):
    """uvicorn's httptools protocol with the head cap, the head deadline and the connection limit."""

    front: ClassVar[Front]

    def __init__(self, config: Config, server_state: ServerState, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._reading_head = True  # from the end of one request's body to the end of the next one's head
        self._head_bytes = 0
        self._deadline: asyncio.TimerHandle | None = None

    # ---- asyncio ------------------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        if not self.front.admit(self):
            self.transport.close()
            return
        self._await_head()

    def data_received(self, data: bytes) -> None:
        while self._reading_head and data:
            room = self.front.limits.max_head_bytes - self._head_bytes
            if room <= 0:
                self.front.note(f"heads over {self.front.limits.max_head_bytes} bytes refused (431)")
                self._end(431)
                return
            piece, data = data[:room], data[room:]
            self._head_bytes += len(piece)
            super().data_received(piece)
            if self.transport.is_closing():
                return
        if data:
            super().data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        self.front.forget(self)
        super().connection_lost(exc)

    # ---- httptools callbacks ----------------------------------------------------------------------
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._await_head()

    def on_headers_complete(self) -> None:
        self._reading_head = False
        self._cancel_deadline()
        self.front.pending.pop(self, None)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._reading_head, self._head_bytes = True, 0

    # ---- the guard ----------------------------------------------------------------------------------
    def _await_head(self) -> None:
        self.front.pending.setdefault(self, None)
        if self._deadline is None:
            self._deadline = self.loop.call_later(self.front.limits.head_timeout, self._head_timed_out)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _head_timed_out(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.front.note(f"heads not complete within {self.front.limits.head_timeout:g}s cut off")
            self._end(408 if self._head_bytes else None)

    def drop(self) -> None:
        """Closes this connection now (it has no request being served), and stops counting it."""
        self.front.forget(self)
        self._end(None)

    def _end(self, status: int | None) -> None:
        self._cancel_deadline()
        if status is not None and (self.cycle is None or self.cycle.response_complete):
            phrase = http.HTTPStatus(status).phrase.encode()
            self.transport.write(b"HTTP/1.1 %d %s\r\ncontent-length: 0\r\nconnection: close\r\n\r\n" % (status, phrase))
        self.transport.close()


def guarded_httptools(limits: FrontLimits) -> type[GuardedHttpTools]:
    """A protocol class for ``uvicorn.Config(http=...)`` whose connections share one ``Front``."""

    class Guarded(GuardedHttpTools):
        front = Front(limits)

    return Guarded
