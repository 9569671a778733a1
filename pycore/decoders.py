"""Push/flush decoders for streamed bodies: no I/O, fed whatever bytes arrive.

``feed(chunk) -> list`` returns what became complete; ``finish() -> list`` flushes at end of body.
Lines are split on *bytes* and decoded only once complete, so a UTF-8 character split across two
chunks is safe. The same objects run under httpx (CPython) and the browser's fetch (Pyodide).

Speed: each fed chunk is handled as a whole: complete lines are cut with ``bytes.rfind``/``split``
and decoded in one call, and only the unfinished last line waits for the next chunk (kept as a list
of pieces, joined when a line end arrives, so a huge line fed in small chunks stays linear).

:class:`SSEDecoder` follows the WHATWG "event stream interpretation" rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):

- a line ends at CRLF, LF or CR (a CR at the end of a chunk may be half of a CRLF);
- a leading U+FEFF is dropped once; a line starting with ``:`` is a comment;
- ``field:value`` drops one space after the colon; a line without a colon is a field with empty value;
- ``data`` lines are joined with ``\\n``; a blank line dispatches; an event whose data buffer is
  empty is not dispatched; ``id`` containing NUL is ignored; ``retry`` must be ASCII digits;
- an event not terminated by a blank line when the body ends is discarded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pycore._json import loads
from pycore.exceptions import StreamFormatError


@dataclass(slots=True)
class SSEEvent:
    event: str
    data: str
    id: str | None = None
    retry: int | None = None


class LineSplitter:
    """Cuts bytes into complete lines, returned as one decoded ``str`` per call.

    SSE (``cr_is_newline``): a line ends at CRLF, LF or CR; a CR ending a chunk is held back until
    the next byte tells whether it is half of a CRLF. NDJSON: only LF ends a line.
    """

    __slots__ = ("_pending", "_crlf")

    def __init__(self, *, cr_is_newline: bool = True) -> None:
        self._pending: list[bytes] = []  # the unfinished last line (no line end inside, but a held CR)
        self._crlf = cr_is_newline

    def feed(self, chunk: bytes) -> list[str]:
        pending = self._pending
        if b"\n" not in chunk and not (self._crlf and (b"\r" in chunk or pending and pending[-1][-1:] == b"\r")):
            if chunk:
                pending.append(chunk)
            return []
        if pending:
            pending.append(chunk)
            data = b"".join(pending)
        else:
            data = chunk
        held = b""
        if self._crlf and b"\r" in data:
            if data[-1:] == b"\r":
                data, held = data[:-1], b"\r"
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        end = data.rfind(b"\n")
        if end < 0:
            self._pending = [data + held]
            return []
        rest = data[end + 1 :] + held
        self._pending = [rest] if rest else []
        return data[:end].decode("utf-8", errors="replace").split("\n")

    def finish(self) -> list[str]:
        """At the end of the body: a held CR was a line end after all; the unfinished rest is returned last."""
        data, self._pending = b"".join(self._pending), []
        if self._crlf and data.endswith(b"\r"):
            return [*self.feed(data[:-1] + b"\n"), ""]
        return [data.decode("utf-8", errors="replace")] if data else []


class SSEDecoder:
    __slots__ = ("_lines", "_event", "_data", "_last_id", "_retry", "_started")

    def __init__(self) -> None:
        self._lines = LineSplitter()
        self._event = ""
        self._data: list[str] = []
        self._last_id: str | None = None
        self._retry: int | None = None
        self._started = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        lines = self._lines.feed(chunk)
        return self._parse(lines) if lines else []

    def finish(self) -> list[SSEEvent]:
        # A held CR may still end a line; an unterminated last line or event is discarded (spec).
        lines = self._lines.finish()
        events = self._parse(lines[:-1]) if len(lines) > 1 else []
        self._event, self._data = "", []
        return events

    def _parse(self, lines: list[str]) -> list[SSEEvent]:
        if not self._started:
            self._started = True
            lines[0] = lines[0].removeprefix("\ufeff")
        events: list[SSEEvent] = []
        data = self._data
        for line in lines:
            if line.startswith("data: "):  # nearly every line: the fast paths first
                data.append(line[6:])
            elif not line:
                if data:
                    text = data[0] if len(data) == 1 else "\n".join(data)
                    events.append(SSEEvent(self._event or "message", text, self._last_id, self._retry))
                    data = self._data = []
                self._event = ""
            elif line.startswith("event: "):
                self._event = line[7:]
            elif line[0] != ":":
                name, colon, value = line.partition(":")
                if colon and value[:1] == " ":
                    value = value[1:]
                self._field(name, value)
        return events

    def _field(self, name: str, value: str) -> None:
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)


class NDJSONDecoder:
    """One JSON value per ``\\n``-terminated line; blank lines skipped; a final unterminated line is parsed."""

    __slots__ = ("_lines",)

    def __init__(self) -> None:
        self._lines = LineSplitter(cr_is_newline=False)

    def feed(self, chunk: bytes) -> list[Any]:
        return [_json_line(line) for line in self._lines.feed(chunk) if line and not line.isspace()]

    def finish(self) -> list[Any]:
        return [_json_line(line) for line in self._lines.finish() if line and not line.isspace()]


def _json_line(line: str) -> Any:
    try:
        return loads(line)
    except ValueError as e:
        raise StreamFormatError(f"invalid JSON line in NDJSON stream: {line[:80]!r}") from e
