"""Push/flush decoders for streamed bodies: no I/O, fed whatever bytes arrive.

``feed(chunk) -> list`` returns what became complete; ``finish() -> list`` flushes at end of body.
Lines are split on *bytes* and decoded only once complete, so a UTF-8 character split across two
chunks is safe. The same objects run under httpx (CPython) and the browser's fetch (Pyodide).

Speed: each fed chunk is handled as a whole: complete lines are cut with ``bytes.rfind``/``split``
and decoded in one call, and only the unfinished last line waits for the next chunk (in a
``bytearray``, so a huge line fed in small chunks stays linear). CRLF line ends (Gemini) are not
normalised chunk by chunk when every CR stands before a LF: each line just drops its CR.

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

import re
from dataclasses import dataclass
from typing import Any

from pydantic_core import from_json

from pycore._json import loads
from pycore.exceptions import StreamFormatError

_LONE_CR = re.compile(rb"\r(?!\n)")  # a CR ending a line by itself


@dataclass(slots=True)
class SSEEvent:
    event: str
    data: str
    id: str | None = None
    retry: int | None = None


class LineSplitter:
    """Cuts bytes into complete lines, returned as one decoded ``str`` per call.

    SSE (``cr_is_newline``): a line ends at CRLF, LF or CR; a CR ending a chunk is held back until
    the next byte tells whether it is half of a CRLF. NDJSON: only LF ends a line. The unfinished
    last line waits in a ``bytearray``: appending is amortized O(1) and only new bytes are searched,
    so a huge line fed in small pieces costs linear time.
    """

    __slots__ = ("_buffer", "_crlf")

    def __init__(self, *, cr_is_newline: bool = True) -> None:
        self._buffer = bytearray()  # the unfinished last line: no line end inside, but a held CR
        self._crlf = cr_is_newline

    def feed(self, chunk: bytes) -> list[str]:
        buffer = self._buffer
        searched = len(buffer)
        buffer += chunk
        if self._crlf and b"\r" in buffer:
            if buffer[-1] == 13 or _LONE_CR.search(buffer, max(searched - 1, 0)):
                return self._normalized_lines(buffer)
            # Every CR stands right before a LF (CRLF line ends, as Gemini sends): it goes with its line.
            return [line[:-1] if line[-1:] == "\r" else line for line in self._lines(buffer, searched)]
        return self._lines(buffer, searched)

    @staticmethod
    def _lines(buffer: bytearray, searched: int) -> list[str]:
        """The lines ended by a LF at or after ``searched`` (none before it), removed from the buffer."""
        if buffer.find(b"\n", searched) < 0:
            return []
        end = buffer.rfind(b"\n")
        text = buffer[:end].decode("utf-8", errors="replace")
        del buffer[: end + 1]
        return text.split("\n")

    @staticmethod
    def _normalized_lines(buffer: bytearray) -> list[str]:
        """CRLF and lone CR become LF first; a CR at the very end waits: it may be half of a CRLF."""
        held = buffer.endswith(b"\r")
        data = bytes(buffer[:-1] if held else buffer).replace(b"\r\n", b"\n")
        if b"\r" in data:
            data = data.replace(b"\r", b"\n")
        end = data.rfind(b"\n")
        buffer[:] = data[end + 1 :] + (b"\r" if held else b"")
        return data[:end].decode("utf-8", errors="replace").split("\n") if end >= 0 else []

    def finish(self) -> list[str]:
        """At the end of the body: a held CR was a line end after all; the unfinished rest is returned last."""
        buffer = self._buffer
        lines: list[str] = []
        if self._crlf and buffer.endswith(b"\r"):
            buffer[-1:] = b"\n"
            lines = self._lines(buffer, 0)
        rest = buffer.decode("utf-8", errors="replace")
        buffer.clear()
        return [*lines, rest] if rest or lines else []


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
        event, data, last_id, retry = self._event, self._data, self._last_id, self._retry
        for line in lines:
            if line.startswith("data:"):  # nearly every line: the usual fields first
                data.append(line[6:] if line[5:6] == " " else line[5:])
            elif not line:  # a blank line dispatches
                if data:
                    text = data[0] if len(data) == 1 else "\n".join(data)
                    events.append(SSEEvent(event or "message", text, last_id, retry))
                    data = []
                event = ""
            elif line.startswith("event: "):
                event = line[7:]
            elif line[0] != ":":  # any other field, in the spec's general form
                name, colon, value = line.partition(":")
                if colon and value[:1] == " ":
                    value = value[1:]
                if name == "data":
                    data.append(value)
                elif name == "event":
                    event = value
                elif name == "id":
                    if "\0" not in value:
                        last_id = value
                elif name == "retry" and value.isascii() and value.isdigit():
                    retry = int(value)
        self._event, self._data, self._last_id, self._retry = event, data, last_id, retry
        return events


class NDJSONDecoder:
    """One JSON value per ``\\n``-terminated line; blank lines skipped; a final unterminated line is parsed."""

    __slots__ = ("_lines",)

    def __init__(self) -> None:
        self._lines = LineSplitter(cr_is_newline=False)

    def feed(self, chunk: bytes) -> list[Any]:
        return _values(self._lines.feed(chunk))

    def finish(self) -> list[Any]:
        return _values(self._lines.finish())


def _values(lines: list[str]) -> list[Any]:
    return [value for line in lines if (value := json_line(line)) is not None]


def json_line(line: str) -> Any:
    """The JSON value of one NDJSON line; ``None`` for a blank line."""
    try:
        return from_json(line)
    except ValueError:  # blank, invalid, or JSON that only the standard library takes (NaN...)
        if not line or line.isspace():
            return None
    try:
        return loads(line)
    except ValueError as e:
        raise StreamFormatError(f"invalid JSON line in NDJSON stream: {line[:80]!r}") from e
