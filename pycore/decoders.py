"""Push/flush decoders for streamed bodies: no I/O, fed whatever bytes arrive.

``feed(chunk) -> list`` returns what became complete; ``finish() -> list`` flushes at end of body.
Lines are split on *bytes* and decoded only once complete, so a UTF-8 character split across two
chunks is safe. The same objects run under httpx (CPython) and the browser's fetch (Pyodide).

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

import json
from dataclasses import dataclass
from typing import Any

from pycore.exceptions import StreamFormatError

_LINE_ENDS = (b"\r\n", b"\n", b"\r")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    event: str
    data: str
    id: str | None = None
    retry: int | None = None


class ByteLineSplitter:
    """Splits bytes into complete lines (CRLF, LF or CR), keeping the unfinished tail."""

    __slots__ = ("_buffer", "_skip_lf", "_cr_only")

    def __init__(self, *, cr_is_newline: bool = True) -> None:
        self._buffer = b""
        self._skip_lf = False  # the last chunk ended in CR: a LF starting the next one belongs to it
        self._cr_only = cr_is_newline

    def feed(self, chunk: bytes) -> list[bytes]:
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        data = self._buffer + chunk if self._buffer else chunk
        if not self._cr_only:
            *lines, self._buffer = data.split(b"\n")
            return [line[:-1] if line.endswith(b"\r") else line for line in lines]
        pieces = data.splitlines(keepends=True)  # bytes.splitlines splits on \r, \n and \r\n only
        if pieces and not pieces[-1].endswith((b"\n", b"\r")):
            self._buffer = pieces.pop()
        else:
            self._buffer = b""
            self._skip_lf = bool(pieces) and pieces[-1].endswith(b"\r")
        return [_strip_end(p) for p in pieces]

    def finish(self) -> bytes:
        tail, self._buffer = self._buffer, b""
        return tail


def _strip_end(line: bytes) -> bytes:
    for end in _LINE_ENDS:
        if line.endswith(end):
            return line[: -len(end)]
    return line


class SSEDecoder:
    __slots__ = ("_lines", "_event", "_data", "_last_id", "_retry", "_started")

    def __init__(self) -> None:
        self._lines = ByteLineSplitter()
        self._event = ""
        self._data: list[str] = []
        self._last_id: str | None = None
        self._retry: int | None = None
        self._started = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        for raw in self._lines.feed(chunk):
            event = self._line(raw.decode("utf-8", errors="replace"))
            if event is not None:
                events.append(event)
        return events

    def finish(self) -> list[SSEEvent]:
        self._lines.finish()  # an unterminated last line or event is discarded (spec)
        self._event, self._data = "", []
        return []

    def _line(self, line: str) -> SSEEvent | None:
        if not self._started:
            self._started = True
            line = line.removeprefix("\ufeff")
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        self._field(name, value)
        return None

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

    def _dispatch(self) -> SSEEvent | None:
        event, data = self._event, self._data
        self._event, self._data = "", []
        if not data:
            return None
        return SSEEvent(event or "message", "\n".join(data), self._last_id, self._retry)


class NDJSONDecoder:
    """One JSON value per ``\\n``-terminated line; blank lines skipped; a final unterminated line is parsed."""

    __slots__ = ("_lines",)

    def __init__(self) -> None:
        self._lines = ByteLineSplitter(cr_is_newline=False)

    def feed(self, chunk: bytes) -> list[Any]:
        return [_json_line(line) for line in self._lines.feed(chunk) if line.strip()]

    def finish(self) -> list[Any]:
        tail = self._lines.finish()
        return [_json_line(tail)] if tail.strip() else []


def _json_line(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError as e:
        raise StreamFormatError(f"invalid JSON line in NDJSON stream: {line[:80]!r}") from e
