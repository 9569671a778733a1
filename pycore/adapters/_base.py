"""What every vendor adapter provides, and the plumbing they share (no vendor knowledge here).

An adapter is pure: it builds :class:`~pycore.http.Request` values and parses bytes; it never
touches the network. :mod:`pycore.client` joins an adapter to a transport.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Mapping
from operator import itemgetter
from typing import Any, ClassVar
from urllib.parse import urlsplit

from pydantic_core import from_json

from pycore._json import loads, string_value
from pycore._parts import DeltaKind, PartsManager
from pycore.decoders import NDJSONDecoder, SSEDecoder, json_line
from pycore.exceptions import APIConnectionError, APIStatusError, StreamFormatError, redact, status_error_class
from pycore.http import Request
from pycore.http.retry import RetryPolicy
from pycore.messages import ChatRequest, Completion, Event, FinishReason, ModelInfo

_NOT_JSON = object()
_OTHER = {False: r"((?:[^\n]+\n)*\n)", True: r"([^\n]*\n)"}  # any other whole SSE event / NDJSON line


class StreamParser(ABC):
    """Push parser for one streamed response: ``feed(bytes)`` / ``finish()`` return unified events.

    Two paths, one result. The generic path decodes every event's JSON and hands it to the adapter
    (:meth:`usual_delta`, :meth:`handle`). Most of a stream, though, is one event shape repeated
    thousands of times with a new piece of text; an adapter that declares that shape
    (:attr:`usual_event`) has those events read straight from the text, many per call into the
    regular-expression engine, without building their JSON. The pattern checks what changes from
    event to event as strictly as JSON does; what stays the same (the *head*: which part, the
    model...) is judged once per change by the generic rule itself (:meth:`usual_part`). Anything
    else, including every event the pattern does not match exactly, takes the generic path.
    """

    ndjson: ClassVar[bool] = False
    usual_event: ClassVar[str | None] = None
    """A regular expression for one whole usual event exactly as the vendor writes it (SSE: its lines
    and the blank line ending it, LF line ends; NDJSON: its line and LF). A named group ``text`` holds
    a non-empty piece of one part's text, reasoning or tool-call arguments, as the inside of a JSON
    string (:data:`pycore._json.STRING_BODY`). One or more other named groups, the *head*, hold all
    else that may differ between two such events and matters to the generic path (which part, the
    model...), loosely matched (``[^"]*``: fast) since :meth:`usual_payload` decodes it; the rest of
    the pattern accepts only what JSON accepts. No unnamed groups: each group costs a string."""
    ignored_event: ClassVar[str | None] = None
    """A regular expression for whole events the generic path reads as nothing at all (no event, no
    state, not the end: Anthropic's ``ping``), skipped without breaking the run around them. No groups."""
    usual_per_match: ClassVar[int] = 4
    """How many consecutive usual events of one head one match reads: the ones after the first repeat
    its head as back-references, so the head is taken and compared once per match, not per event."""
    _usual: ClassVar[_Usual | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if {"usual_event", "ignored_event", "usual_per_match"} & cls.__dict__.keys():
            cls._usual = (_compile_usual(cls.usual_event, cls.ignored_event, cls.ndjson, cls.usual_per_match)
                          if cls.usual_event else None)

    def __init__(self, vendor: str, *, status: int = 200) -> None:
        self.parts = PartsManager(vendor, runs=True)
        self.status = status
        self.done = False  # the vendor said the stream is over ([DONE], message_stop, done:true)
        # The head of the last usual event and its (kind, key): kept from chunk to chunk, forgotten
        # whenever another event is read (it may change what a head means).
        self._head: Any = None
        self._part: tuple[DeltaKind, Hashable] = ("text", None)
        self._stand_ins: dict[Any, Any] = {}  # head -> its stand-in event (usual_part), as JSON
        self._decoder: SSEDecoder | NDJSONDecoder = NDJSONDecoder() if self.ndjson else SSEDecoder()
        self._cut = self._decoder.feed_text
        self._boundary = "\n" if self.ndjson else "\n\n"  # where a whole event ends

    def feed(self, chunk: bytes) -> list[Event]:
        """Events for one chunk; consecutive deltas of one part within it come as one event."""
        text = self._cut(chunk)
        return self._read(text) if text and not self.done and self.parts.error is None else []

    def finish(self) -> list[Event]:
        text = self._decoder.finish_text()
        events = self._read(text) if text and not self.done and self.parts.error is None else []
        return events + self.parts.close()

    def completion(self, *, incomplete: bool = False) -> Completion:
        return self.parts.completion(incomplete=incomplete)

    def _read(self, text: str, *, inner: bool = False) -> list[Event]:
        """Events for whole events' (or lines') text: usual events read from the text, per run of one
        head, and handed to the parts manager once per run; the rest through :meth:`_items`, in order.
        Ends the parts manager's run (what is given out is not changed later), unless ``inner``."""
        parts = self.parts
        if self._usual is None:
            try:
                return self._items(self._decoder.parse(text))
            finally:
                parts.end_run()
        scan, heads, at, texts = self._usual
        events: list[Event] = []
        last = self._head  # the head of the run below
        kind, key = self._part
        run: list[str] = []
        other: list[str] = []
        units = scan.findall(text)
        spans: list[tuple[int, int]] | None = None
        try:
            for i, unit in enumerate(units):
                if unit[-1]:  # not a usual event: read with those around it, in order
                    other.append(unit[-1])
                    continue
                piece = unit[at]
                if not piece:  # an ignored event
                    continue
                if other:
                    events += self._run_events(kind, key, run)
                    events += self._read_other(other)
                    other, last = [], None
                    if parts.error is not None or self.done:
                        return events
                head = heads(unit)
                if head != last:
                    events += self._run_events(kind, key, run)
                    part = self.usual_part(head)
                    if part is None:  # declined: the generic path reads this match
                        last = None
                        spans = spans or [m.span() for m in scan.finditer(text)]
                        declined, stop = self._read_declined(text, spans[i], (kind, key))
                        events += declined
                        if stop:
                            return events
                        last, (kind, key) = self._head, self._part
                        continue
                    last, (kind, key) = head, part
                run += texts(unit)  # the match's pieces ("" for the events it did not reach)
            if run:  # _joined(run), the common case inlined: no escapes
                piece = "".join(run)
                events += parts.delta(kind, key, _joined(run) if "\\" in piece else piece)
                run = []
            if other:
                events += self._read_other(other)
            return events
        finally:  # also when a malformed event raised: the deltas before it are kept all the same
            events += self._run_events(kind, key, run)
            self._head, self._part = (None, self._part) if other else (last, (kind, key))
            if not inner:
                parts.end_run()

    def _run_events(self, kind: DeltaKind, key: Hashable, run: list[str]) -> list[Event]:
        """The parts manager's events for the pieces of part ``(kind, key)`` gathered in ``run``, which is
        then emptied; none when it is empty."""
        if not run:
            return []
        events = self.parts.delta(kind, key, _joined(run))
        run.clear()
        return events

    def _read_other(self, other: list[str]) -> list[Event]:
        """Events for the text of consecutive events that are not usual ones, the generic way."""
        return self._items(self._decoder.parse("".join(other)))

    def _read_declined(
        self, text: str, span: tuple[int, int], part: tuple[DeltaKind, Hashable]
    ) -> tuple[list[Event], bool]:
        """Events for the match at ``span`` of ``text``, whose head :meth:`usual_part` declined: its first
        event is read the generic way from its own text, then the match's other events are read again
        (that event may change the answer). Returns the events and whether reading stops there (an error
        or the end in that first event); leaves in :attr:`_head` and :attr:`_part` the head and part
        that the run goes on with (``part``, headless, unless the events read again say otherwise)."""
        start, end = span
        self._head, self._part = None, part
        cut = text.index(self._boundary, start) + len(self._boundary)
        events = self._items(self._decoder.parse(text[start:cut]))
        if self.parts.error is not None or self.done:
            return events, True
        if cut < end:
            events += self._read(text[cut:end], inner=True)
        return events, False

    def _items(self, items: Iterable[Any]) -> list[Event]:
        """The generic path: each item decoded once; the vendor's usual deltas (:meth:`usual_delta`)
        are gathered here, per part, and reach the parts manager as one piece per run; the rest go
        to :meth:`handle`."""
        events: list[Event] = []
        if self.done:
            return events
        parts, decode, usual, handle = self.parts, self.decode, self.usual_delta, self.handle
        # The part of the run being gathered (used only once a delta started the run).
        kind: DeltaKind = "text"
        key: Hashable = None
        run: list[str] = []
        try:
            for item in items:
                payload = decode(item)
                delta = usual(payload)
                if delta is not None:
                    if run and (delta[0] != kind or delta[1] != key):
                        events += parts.delta(kind, key, "".join(run))
                        run = []
                    kind, key = delta[0], delta[1]
                    run.append(delta[2])
                    continue
                if run:
                    events += parts.delta(kind, key, "".join(run))
                    run = []
                try:
                    events += handle(payload)
                except (KeyError, IndexError, TypeError, AttributeError) as e:  # JSON, but not the vendor's shape
                    raise StreamFormatError(
                        f"{parts.vendor}: an event this parser cannot read ({type(e).__name__} {e}): "
                        f"{json.dumps(payload, ensure_ascii=False)[:120]}"
                    ) from e
                if parts.error is not None or self.done:  # like the vendors' SDKs: nothing after counts
                    break
        finally:  # a malformed item raises: the deltas before it are kept all the same
            if run:
                events += parts.delta(kind, key, "".join(run))
        return events

    def decode(self, item: Any) -> Any:
        """The JSON value an item carries: an SSE event's data, or an NDJSON line's (``None``: a blank line)."""
        return json_line(item) if self.ndjson else sse_json(item.data)

    def usual_delta(self, payload: Any) -> tuple[DeltaKind, Hashable, str] | None:
        """``(kind, part key, text)`` when ``payload`` is one of the vendor's usual events: a non-empty
        piece of one part's text, reasoning or tool-call arguments and nothing else (its other fields
        recorded here). ``None`` sends it to :meth:`handle`."""
        return None

    def usual_payload(self, head: Any) -> str:
        """The JSON text of a :attr:`usual_event` event with this head (a string, or a tuple of them in
        the pattern's order) and the text ``x``: what :meth:`usual_part` judges."""
        raise NotImplementedError

    def usual_part(self, head: Any) -> tuple[DeltaKind, Hashable] | None:
        """``(kind, part key)`` for the :attr:`usual_event` events whose head is ``head``, as the generic
        path decides it (:meth:`usual_delta`, recording what else the head carries), or ``None``: read
        this event the generic way. Asked whenever the head changes or another event came between,
        since that event may change the answer (a tool call started, new token counts). The stand-in
        event of the last few heads is kept: asking again costs only the generic rule."""
        payload = self._stand_ins.get(head, _NOT_JSON)
        if payload is _NOT_JSON:
            try:
                payload = from_json(self.usual_payload(head))
            except ValueError:  # an escaped quote in a loose field, a control character...
                return None
            if len(self._stand_ins) == 8:  # bounded: heads may carry what changes (token counts)
                self._stand_ins.clear()
            self._stand_ins[head] = payload
        delta = self.usual_delta(payload)
        return None if delta is None else (delta[0], delta[1])

    @abstractmethod
    def handle(self, payload: Any) -> list[Event]:
        """One decoded item (:meth:`decode`) that is not a usual delta."""


class Adapter(ABC):
    """Where the key goes (SECURITY.md V1): only to ``base_url``, the vendor's own address unless the
    user gave another. :meth:`check_destination` is asked before anything is sent, and transports
    never follow a redirect with the key (:class:`~pycore.client.ChatClient` refuses them)."""

    vendor: ClassVar[str]
    default_base_url: ClassVar[str]
    retry_policy: ClassVar[RetryPolicy] = RetryPolicy()
    url_schemes: ClassVar[tuple[str, ...]] = ("https", "http")

    def __init__(self, api_key: str | None = None, base_url: str | None = None) -> None:
        self.api_key = api_key
        self.base_url = self._checked_base_url((base_url or self.default_base_url).rstrip("/"))

    def __repr__(self) -> str:  # never the key
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    def _checked_base_url(self, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in self.url_schemes or not parts.hostname:
            raise ValueError(f"{self.vendor}: the base URL must be an http(s) address with a host, like "
                             f"{self.default_base_url}")
        if parts.username is not None or parts.password is not None or parts.query or parts.fragment:
            raise ValueError(f"{self.vendor}: the base URL may not carry credentials, a query or a fragment "
                             "(keys travel in headers, never in URLs)")
        return url

    def check_destination(self, url: str) -> None:
        """Raise unless ``url`` is under the base URL: same scheme, host and port, and path below it."""
        base, target = urlsplit(self.base_url), urlsplit(url)
        same_origin = (base.scheme, base.hostname, base.port) == (target.scheme, target.hostname, target.port)
        below = target.path == base.path or target.path.startswith(base.path.rstrip("/") + "/")
        if not (same_origin and below):
            raise ValueError(f"{self.vendor}: refusing to send a request to {target.hostname or 'another address'}: "
                             f"this provider's requests go only to {base.hostname} (its base URL)")

    def explain_connection_error(self, error: APIConnectionError) -> APIConnectionError:
        """A vendor may add what usually causes a connection failure (Ollama: its allowed origins)."""
        return error

    # ------------------------------------------------------------------ requests
    stream_fields: ClassVar[dict[str, Any]] = {"stream": True}  # what a streamed request adds to the body

    def build_request(self, request: ChatRequest) -> Request:
        """The vendor's own body, then what all vendors do alike: tools, streaming, vendor options."""
        body = self.request_body(request)
        if request.tools:
            body.update(self.tools_fields(request))
        if request.stream:
            body.update(self.stream_fields)
        body = merge_options(drop_none(body), request.vendor_options)
        return self._json_request(self.chat_url(request), body, self._headers())

    @abstractmethod
    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """Model, messages, system prompt and sampling fields, in the vendor's names (None = leave out)."""

    @abstractmethod
    def tools_fields(self, request: ChatRequest) -> dict[str, Any]:
        """The body fields declaring ``request.tools`` and the tool choice (called only when there are tools)."""

    @abstractmethod
    def chat_url(self, request: ChatRequest) -> str: ...

    def _headers(self) -> dict[str, str]:
        """Authentication and the vendor's required headers: nothing more (extra headers break CORS preflights)."""
        return {}

    @abstractmethod
    def models_request(self) -> Request: ...

    @abstractmethod
    def parse_models(self, body: bytes) -> list[ModelInfo]: ...

    # ------------------------------------------------------------------ responses
    @abstractmethod
    def stream_parser(self, *, status: int = 200) -> StreamParser: ...

    @abstractmethod
    def parse_payload(self, parts: PartsManager, payload: Any) -> None:
        """A whole (non-streamed) JSON response, through the same parts manager as the stream."""

    def parse_response(self, body: bytes) -> Completion:
        parts = PartsManager(self.vendor)
        self.parse_payload(parts, _json(body))
        parts.close()
        return parts.completion()

    # ------------------------------------------------------------------ errors
    @abstractmethod
    def error_fields(self, payload: Any) -> tuple[str | None, str | None]:
        """(type, message) from the vendor's error body; (None, None) when it has neither."""

    def map_error(self, status: int, headers: Mapping[str, str], body: bytes) -> APIStatusError:
        try:
            payload: Any = json.loads(body)
        except ValueError:
            payload = None
        kind, message = self.error_fields(payload) if payload is not None else (None, None)
        if message is None:
            message = body.decode("utf-8", errors="replace").strip()[:500] or f"HTTP {status}"
        cls = status_error_class(status, kind)
        return cls(
            redact(message, [self.api_key]), vendor=self.vendor, status=status, type=kind, headers=headers, body=payload
        )

    def error_completion(self, status: int, headers: Mapping[str, str], body: bytes) -> Completion:
        error = self.map_error(status, headers, body)
        parts = PartsManager(self.vendor)
        parts.set_error(status, error.type, error.vendor_message)
        return parts.completion()

    # ------------------------------------------------------------------ helpers
    def _json_request(self, url: str, body: dict[str, Any], headers: dict[str, str]) -> Request:
        return Request("POST", url, {**headers, "content-type": "application/json"}, json.dumps(body).encode())


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError as e:
        raise StreamFormatError(f"response body is not JSON: {body[:80]!r}") from e


def merge_options(body: dict[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """Vendor-only options go in untouched; a dict option is merged one level into ours."""
    for key, value in options.items():
        if isinstance(value, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}
        else:
            body[key] = value
    return body


def drop_none(mapping: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if v is not None}


def _joined(pieces: list[str]) -> str:
    """The text of a run of JSON string insides. Escapes decode the same joined as one by one, but
    for ``\\u`` escapes (a surrogate pair may straddle two pieces, which the generic path reads as
    two lone halves), so those pieces are decoded each on its own."""
    text = "".join(pieces)
    if "\\" not in text:
        return text
    if "\\u" not in text:
        return string_value(text)
    return "".join([string_value(piece) for piece in pieces])


_Usual = tuple[re.Pattern[str], Callable[[Any], Any], int, Callable[[Any], tuple[str, ...]]]


def _compile_usual(usual: str, ignored: str | None, ndjson: bool, per_match: int) -> _Usual:
    """A pattern for ``re.findall`` over whole units: up to ``per_match`` usual events of one head (its
    groups), an ignored event (no group), or any other unit (the last group); and getters for where its
    tuples hold the head, the first text and every text."""
    names = re.compile(usual).groupindex
    if "text" not in names or len(names) < 2 or any(re.fullmatch(r"text_\d+", name) for name in names):
        raise TypeError(f"usual_event needs a group named 'text' and other named groups (none named text_N): {usual}")
    # The same event again, its head groups turned into back-references to the first event's and its
    # text group renamed; nested, so that each is tried only after the one before it matched.
    following = []
    for k in range(2, per_match + 1):
        event = usual.replace("(?P<text>", f"(?P<text_{k}>")
        for name in names:
            if name != "text":
                start = event.index(f"(?P<{name}>")
                event = f"{event[:start]}(?P={name}){event[_group_end(event, start):]}"
        following.append(event)
    run = usual + "".join(f"(?:{event}" for event in following) + "|)" * len(following)
    scan = re.compile(f"{run}|{ignored or '(?!)'}|{_OTHER[ndjson]}")
    texts = [i - 1 for n, i in scan.groupindex.items() if n == "text" or re.fullmatch(r"text_\d+", n)]
    if scan.groups != len(scan.groupindex) + 1:
        raise TypeError(f"usual_event may have no unnamed groups (each costs a string), and ignored_event no "
                        f"groups: {scan.pattern}")
    heads = itemgetter(*sorted(i - 1 for n, i in names.items() if n != "text"))
    return scan, heads, names["text"] - 1, itemgetter(*texts) if per_match > 1 else (lambda unit: (unit[texts[0]],))


def _group_end(pattern: str, start: int) -> int:
    """Where the group opened by the parenthesis at ``pattern[start]`` ends (past its closing parenthesis)."""
    depth, i = 0, start
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 1  # an escaped character, whatever it is
        elif char == "[":  # a class: parentheses inside are characters, and so is a ] first in it
            i += 2 if pattern[i + 1 : i + 2] == "^" else 1
            i += 1 if pattern[i : i + 1] == "]" else 0
            while pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError(f"unbalanced group at {start} in {pattern}")


def sse_json(data: str) -> Any:
    try:
        return from_json(data)  # pycore._json.loads, inlined: this runs once per streamed event
    except (ValueError, TypeError):
        pass
    try:
        return loads(data)
    except ValueError as e:
        raise StreamFormatError(f"invalid JSON in an SSE event: {data[:80]!r}") from e


def finish_from(table: Mapping[str, FinishReason], raw: str | None, *, tool_calls: bool = False) -> FinishReason:
    reason = table.get(raw or "", "other")
    return "tool_calls" if tool_calls and reason == "stop" else reason
