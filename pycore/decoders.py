"""Push/flush decoders for streamed bodies: no I/O, fed whatever bytes arrive.

``feed(chunk) -> list`` returns what became complete; ``finish() -> list`` flushes at end of body.
The same objects run under httpx (CPython) and the browser's fetch (Pyodide).

Bytes are cut into *units* before they are decoded: whole events for SSE (text ending with a blank
line), whole lines for NDJSON. A UTF-8 character split across two chunks is therefore safe. The
unfinished last unit waits in a ``bytearray``: only new bytes are searched for a boundary, so a huge
event fed in small pieces stays linear. :class:`SSEDecoder` gives :class:`SSEEvent` values (event name
and data); :class:`NDJSONDecoder` gives the lines, undecoded: a stream parser reads the JSON they carry.

That unfinished unit is capped (SECURITY.md T-Z3): an event or a line that never ends would otherwise
grow memory without bound. Past :data:`MAX_UNIT_BYTES` (``max_event_bytes`` / ``max_line_bytes`` to
choose another cap; the MCP client passes its message cap) the bytes held are dropped and the decoder
raises :class:`UnitTooLargeError`, a :class:`~pycore.exceptions.StreamFormatError`, from then on. The
complete units that arrived before it are given out first, so a stream parser keeps what it read, as
it does when any other malformed event stops it.

:class:`SSEDecoder` follows the WHATWG "event stream interpretation" rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):

- a line ends at CRLF, LF or CR (a CR at the end of a chunk may be half of a CRLF);
- a leading U+FEFF is dropped once; a line starting with ``:`` is a comment;
- ``field:value`` drops one space after the colon; a line without a colon is a field with empty value;
- ``data`` lines are joined with ``\\n``; a blank line dispatches; an event whose data buffer is
  empty is not dispatched; ``id`` containing NUL is ignored; ``retry`` must be ASCII digits;
- an event not terminated by a blank line when the body ends is discarded.

Cutting at blank lines changes none of this: fields only take effect when an event is dispatched,
and ``id``/``retry`` persist across events as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pycore.exceptions import StreamFormatError

MAX_UNIT_BYTES: Final = 32 * 1024 * 1024
"""The most one unfinished SSE event or NDJSON line may hold. Vendors stream small deltas, but one event
may carry a whole answer: SECURITY.md T-Z2 wants a single 12 MB text delta stored and shown (escaped as
JSON, CJK text takes up to twice its UTF-8 size), so the cap sits well above that, and low enough that
the held bytes and their decoded text stay a small part of a tab's memory."""


class UnitTooLargeError(StreamFormatError):
    """An SSE event or NDJSON line that grew past the decoder's cap without ending: the stream is cut off there."""


def _size(limit: int) -> str:
    for unit, name in ((1024 * 1024, "MiB"), (1024, "KiB")):
        if limit % unit == 0:
            return f"{limit // unit} {name}"
    return f"{limit} bytes"


@dataclass(slots=True)
class SSEEvent:
    event: str
    data: str
    id: str | None = None
    retry: int | None = None


class UnitCutter:
    """Cuts bytes into complete units, each ending with ``boundary``, returned as one decoded ``str``.

    ``cr_is_newline`` (SSE): CRLF and a lone CR become LF before the boundary is looked for; a CR
    ending a chunk is held back until the next byte tells whether it is half of a CRLF. NDJSON:
    only LF ends a line (a CR before it stays, as JSON whitespace). ``bom`` (SSE): a U+FEFF that
    starts the stream is dropped, there only. ``limit``: the most bytes the unfinished unit (``what``,
    for the error) may hold; past it, :class:`UnitTooLargeError` (see the module's docstring).
    """

    __slots__ = ("_buffer", "_boundary", "_size", "_crlf", "_held_cr", "_bom", "_limit", "_what", "_error")

    def __init__(self, boundary: bytes, *, cr_is_newline: bool, bom: bool = False, limit: int = MAX_UNIT_BYTES,
                 what: str = "unit") -> None:
        self._buffer = bytearray()  # the unfinished last unit: no boundary inside
        self._boundary = boundary
        self._size = len(boundary)
        self._crlf = cr_is_newline
        self._held_cr = False
        self._bom = bom  # the start of the stream is still to come
        self._limit = limit
        self._what = what
        self._error: UnitTooLargeError | None = None  # once past the cap, every later call raises it

    # Per chunk, so written for Pyodide: ``13 in chunk`` rather than ``b"\r" in chunk`` (bytes tries
    # the argument as an int first, and raising and clearing that TypeError costs more than the search),
    # no builtin calls, positional arguments.
    def feed(self, chunk: bytes) -> str:
        """The complete units that ``chunk`` finishes, as one string ("" when none)."""
        if self._error is not None:
            raise self._error
        if self._crlf and (self._held_cr or 13 in chunk):
            chunk = self._normalized(chunk)
        buffer, size = self._buffer, self._size
        searched = len(buffer) - size + 1  # a boundary may start in the last bytes already there
        buffer += chunk
        # The last boundary, searched from the end and only among new bytes (none before them).
        end = buffer.rfind(self._boundary, searched if searched > 0 else 0)
        if end < 0:
            if len(buffer) > self._limit:
                raise self._overflow()
            return ""
        end += size
        text = buffer[:end].decode("utf-8", "replace")
        del buffer[:end]
        if len(buffer) > self._limit:
            self._overflow()  # raised from the next call: the complete units before it go out first
        if self._bom:
            self._bom = False
            text = text.removeprefix("\ufeff")
        return text

    def _normalized(self, chunk: bytes) -> bytes:
        if self._held_cr:
            chunk = b"\r" + chunk
        self._held_cr = chunk.endswith(b"\r")
        if self._held_cr:
            chunk = chunk[:-1]
        chunk = b"\n".join(chunk.split(b"\r\n"))  # in Pyodide, 2/3 of bytes.replace's cost
        return chunk.replace(b"\r", b"\n") if 13 in chunk else chunk

    def _overflow(self) -> UnitTooLargeError:
        self._buffer.clear()  # memory stays bounded: the unit's bytes go now
        self._error = UnitTooLargeError(
            f"an {self._what} grew past {_size(self._limit)} without ending; the stream was cut off there "
            "(what arrived before it is kept)")
        return self._error

    def finish(self) -> str:
        """At the end of the body, everything left: a held CR was a line end after all."""
        if self._error is not None:
            raise self._error
        if self._held_cr:
            self._held_cr = False
            self._buffer += b"\n"
        text = self._buffer.decode("utf-8", errors="replace")
        self._buffer.clear()
        if self._bom:
            self._bom = False
            text = text.removeprefix("\ufeff")
        return text


class SSEDecoder:
    __slots__ = ("_units", "_event", "_data", "_last_id", "_retry")

    def __init__(self, *, max_event_bytes: int = MAX_UNIT_BYTES) -> None:
        self._units = UnitCutter(b"\n\n", cr_is_newline=True, bom=True, limit=max_event_bytes, what="SSE event")
        self._event = ""
        self._data: list[str] = []
        self._last_id: str | None = None
        self._retry: int | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """The events ``chunk`` completes."""
        return self._parse(self._units.feed(chunk))

    def finish(self) -> list[SSEEvent]:
        """The events left at the end of the body; an unterminated last event is discarded."""
        text = self._units.finish()
        return self._parse(text[: text.rfind("\n\n") + 2])

    def _parse(self, text: str) -> list[SSEEvent]:
        """The events of whole events' text: LF line ends, each event ending with a blank line."""
        if not text:
            return []
        events: list[SSEEvent] = []
        event, data, last_id, retry = self._event, self._data, self._last_id, self._retry
        for line in text.split("\n")[:-1]:  # the text ends with a line end: nothing follows the last
            if not line:  # a blank line dispatches
                if data:
                    text = data[0] if len(data) == 1 else "\n".join(data)
                    events.append(SSEEvent(event or "message", text, last_id, retry))
                    data = []
                event = ""
            elif line.startswith("data: "):  # nearly every other line: the usual fields first
                data.append(line[6:])
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
    """One line per ``\\n``-terminated line, its line end removed (a CR before it stays, as JSON
    whitespace); blank lines skipped; a final unterminated line is given out by :meth:`finish`."""

    __slots__ = ("_units",)

    def __init__(self, *, max_line_bytes: int = MAX_UNIT_BYTES) -> None:
        self._units = UnitCutter(b"\n", cr_is_newline=False, limit=max_line_bytes, what="NDJSON line")

    def feed(self, chunk: bytes) -> list[str]:
        """The lines ``chunk`` completes."""
        return _lines(self._units.feed(chunk))

    def finish(self) -> list[str]:
        """The last line, when the body does not end with a line end."""
        return _lines(self._units.finish() + "\n")


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n")[:-1] if line and not line.isspace()]
