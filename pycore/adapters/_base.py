"""What every vendor adapter provides, and the plumbing they share (no vendor knowledge here).

An adapter is pure: it builds :class:`~pycore.http.Request` values and parses bytes; it never
touches the network. :mod:`pycore.client` joins an adapter to a transport.
"""

from __future__ import annotations

import json
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict
from pydantic_core import from_json

from pycore._json import loads
from pycore._parts import PartsManager
from pycore.decoders import NDJSONDecoder, SSEDecoder, SSEEvent
from pycore.exceptions import (
    APIConnectionError,
    APIStatusError,
    StreamFormatError,
    UnsupportedContentError,
    redact,
    status_error_class,
)
from pycore.http import Request
from pycore.http.retry import RetryPolicy
from pycore.messages import ChatRequest, Completion, Event, FinishReason, ModelInfo


class StreamParser(ABC):
    """Push parser for one streamed response: ``feed(bytes)`` / ``finish()`` return unified events.

    One way through: the decoder cuts the bytes into SSE events (name and data) or NDJSON lines;
    :meth:`decode` gives the JSON value each carries, and the adapter's :meth:`handle` turns that
    value into unified events through the parts manager. Consecutive deltas of one part within a fed
    chunk come as one event (the parts manager holds a delta back until something else happens or the
    chunk ends); an event handed out is never changed. A malformed event raises
    :class:`~pycore.exceptions.StreamFormatError` naming the vendor and the event; what arrived before
    it stays in :meth:`completion`.
    """

    ndjson: ClassVar[bool] = False

    def __init__(self, vendor: str, *, status: int = 200) -> None:
        self.parts = PartsManager(vendor, merge_deltas=True)
        self.status = status
        self.done = False  # the vendor said the stream is over ([DONE], message_stop, done:true)
        self._decoder: SSEDecoder | NDJSONDecoder = NDJSONDecoder() if self.ndjson else SSEDecoder()

    def feed(self, chunk: bytes) -> list[Event]:
        """Events for one chunk; consecutive deltas of one part within it come as one event."""
        return self._read(self._decoder.feed(chunk))

    def finish(self) -> list[Event]:
        return self._read(self._decoder.finish()) + self.parts.close()

    def completion(self, *, incomplete: bool = False) -> Completion:
        return self.parts.completion(incomplete=incomplete)

    def _read(self, units: list[SSEEvent] | list[str]) -> list[Event]:
        """Events for the decoder's units, in order, until the vendor's end or an error."""
        events: list[Event] = []
        parts, decode, handle = self.parts, self.decode, self.handle
        try:
            for unit in units:
                if self.done or parts.error is not None:  # like the vendors' SDKs: nothing after counts
                    break
                payload = decode(unit)
                try:
                    events += handle(payload)
                except (KeyError, IndexError, TypeError, AttributeError) as e:  # JSON, but not the vendor's shape
                    raise StreamFormatError(
                        f"{parts.vendor}: an event this parser cannot read ({type(e).__name__} {e}): "
                        f"{json.dumps(payload, ensure_ascii=False)[:120]}"
                    ) from e
        finally:  # also when an event raised: the deltas before it stay in the parts
            events += parts.flush()
        return events

    def decode(self, unit: Any) -> Any:
        """The JSON value a unit carries: an SSE event's data, or an NDJSON line."""
        if self.ndjson:
            try:
                return from_json(unit)
            except ValueError:
                return _loads(unit, "invalid JSON line in NDJSON stream")
        return sse_json(unit.data)

    @abstractmethod
    def handle(self, payload: Any) -> list[Event]:
        """One decoded event (:meth:`decode`): the unified events it makes, through :attr:`parts`."""


class VendorAlias(BaseModel):
    """Another name the user may pick that speaks an adapter's API, with what it changes (declared by
    that adapter in :attr:`Adapter.aliases`; the catalogue lists it after the vendors)."""

    model_config = ConfigDict(frozen=True)

    id: str
    label: str
    needs_key: bool
    needs_base_url: bool = False  # no default address: the user's own server is required
    base_url: str | None = None  # a known service's own address (the user may still give another)


class Adapter(ABC):
    """Where the key goes (SECURITY.md V1): only to ``base_url``, the vendor's own address unless the
    user gave another. :meth:`check_destination` is asked before anything is sent, and transports
    never follow a redirect with the key (:class:`~pycore.client.ChatClient` refuses them)."""

    vendor: ClassVar[str]
    default_base_url: ClassVar[str]
    retry_policy: ClassVar[RetryPolicy] = RetryPolicy()
    url_schemes: ClassVar[tuple[str, ...]] = ("https", "http")

    # What the rest of the core and the page know of this vendor: declared by its adapter and nowhere else
    # (pycore.adapters.catalogue(), which the build puts in the page).
    label: ClassVar[str]  # its name, as the user reads it
    needs_key: ClassVar[bool] = True  # False: local servers that usually take none
    tool_name: ClassVar[re.Pattern[str]] = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # the tool names it documents
    classifier_mode: ClassVar[Literal["tool", "json"]] = "tool"  # how focus memory's classifier asks for labels
    aliases: ClassVar[tuple[VendorAlias, ...]] = ()  # other names the user may pick that speak its API
    temperature: ClassVar[bool] = True  # False: its API takes no temperature (the setting is not sent)
    reasoning: ClassVar[Literal["effort", "budget"] | None] = None  # how it is told how much to think

    @classmethod
    def json_mode_options(cls, name: str, schema: dict[str, Any], open_schema: dict[str, Any]) -> dict[str, Any]:
        """The body fields that make this vendor answer JSON of ``schema`` (``open_schema``: the same without
        ``additionalProperties: false``, for vendors that refuse it); ``{}`` for a vendor without a JSON
        mode (the prompt then asks for JSON and the answer is checked)."""
        return {}

    def __init__(self, api_key: str | None = None, base_url: str | None = None) -> None:
        self.chosen: str | None = None  # the vendor the user picked (an alias's id), when the page said
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

    def describe(self) -> str:
        """The vendor as an error names it."""
        return self.label

    def explain_connection_error(self, error: APIConnectionError) -> APIConnectionError:
        """A vendor may add what usually causes a connection failure (Ollama: its allowed origins)."""
        return error

    # ------------------------------------------------------------------ requests
    stream_fields: ClassVar[dict[str, Any]] = {"stream": True}  # what a streamed request adds to the body

    def build_request(self, request: ChatRequest) -> Request:
        """The vendor's own body, then what all vendors do alike: tools, streaming, vendor options. Content the
        vendor cannot take raises :class:`UnsupportedContentError` naming the vendor."""
        try:
            body = self.request_body(request)
        except UnsupportedContentError as e:
            raise UnsupportedContentError(f"{self.describe()}: {e}") from e
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

    # ------------------------------------------------------------------ voice
    def transcription_request(self, audio: bytes, mime_type: str, *, chat_model: str, model: str | None = None,
                              language: str | None = None) -> Request:
        """Speech to text of a recorded clip (``model``: the vendor's transcription model, else its default;
        ``chat_model``: the profile's model, for a vendor whose chat models read audio)."""
        raise UnsupportedContentError(f"{self.describe()} has no speech-to-text API: dictate with an OpenAI or "
                                      "Gemini profile, or in a browser with its own speech recognition")

    def parse_transcription(self, body: bytes) -> str:
        raise NotImplementedError

    def speech_request(self, text: str, *, voice: str | None = None, speed: float | None = None,
                       model: str | None = None) -> Request:
        """Text to speech; the answer's bytes and media type come from :meth:`parse_speech`."""
        raise UnsupportedContentError(f"{self.describe()} has no text-to-speech API: read aloud with the browser's "
                                      "voice, or with an OpenAI or Gemini profile")

    def parse_speech(self, body: bytes, content_type: str) -> tuple[bytes, str]:
        return body, content_type.split(";")[0].strip() or "application/octet-stream"

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


def multipart(fields: Mapping[str, str | None], file: tuple[str, str, str, bytes]) -> tuple[bytes, str]:
    """A multipart/form-data body (RFC 7578): the text fields, then ``file`` as (field name, file name, type)
    and its bytes; returns the body and its content type."""
    boundary = "orizuru-" + os.urandom(12).hex()
    out = b""
    for name, value in fields.items():
        if value is not None:
            out += f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
    field, filename, mime_type, data = file
    out += (f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{filename}"\r\n'
            f"Content-Type: {mime_type}\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    return out, f"multipart/form-data; boundary={boundary}"


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


def sse_json(data: str) -> Any:
    try:
        return from_json(data)  # runs once per streamed event
    except (ValueError, TypeError):
        return _loads(data, "invalid JSON in an SSE event")


def _loads(text: str, error: str) -> Any:
    """The JSON that jiter refused, as the standard library reads it (or the error, naming the event)."""
    try:
        return loads(text)
    except ValueError as e:
        raise StreamFormatError(f"{error}: {text[:80]!r}") from e


def finish_from(table: Mapping[str, FinishReason], raw: str | None, *, tool_calls: bool = False) -> FinishReason:
    reason = table.get(raw or "", "other")
    return "tool_calls" if tool_calls and reason == "stop" else reason
