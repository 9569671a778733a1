"""Joins an adapter to a transport: send with retries, stream events, keep the completion.

    client = ChatClient(get_adapter("anthropic", api_key=key))       # transport: fetch or httpx
    stream = client.stream(request)
    async for event in stream:                                      # unified events as they arrive
        ...
    stream.completion                                                # the whole answer, always set

Requests go only under the adapter's base URL and never follow a redirect (SECURITY.md V1). A body
that stalls longer than the request's timeout ends like a dropped connection.

Error statuses raise the vendor's typed error (after the retries the policy allows). Once the body
has started, nothing is retried: a dropped connection ends the stream with an ``error`` event and
``completion.incomplete``; so does Stop (cancelling the iterating task, or ``await stream.aclose()``),
which also aborts the request. What arrived is kept in both cases.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from urllib.parse import urljoin, urlsplit

from pycore.adapters import Adapter
from pycore.exceptions import APIConnectionError, APIStatusError, redact
from pycore.http import Request, Response, Transport, default_transport
from pycore.http.retry import RetryPolicy, send_with_retries
from pycore.messages import ChatRequest, Completion, Event, ModelInfo


class ChatStream:
    def __init__(self, client: ChatClient, request: ChatRequest) -> None:
        self._client = client
        self._request = request
        self._response: Response | None = None
        self.completion: Completion | None = None
        self.aborted = False

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._run()

    async def _run(self) -> AsyncIterator[Event]:
        adapter = self._client.adapter
        self._response = response = await self._client.send(adapter.build_request(self._request))
        parser = adapter.stream_parser(status=response.status)
        cut = False
        try:
            async for chunk in response.aiter_bytes():
                for event in parser.feed(chunk):
                    yield event
            for event in parser.finish():
                yield event
        except APIConnectionError as e:
            cut = True
            for event in parser.parts.set_error(None, "connection_error", e.message, code="vendor_connection_lost"):
                yield event
        except (asyncio.CancelledError, GeneratorExit):
            self.aborted = cut = True
            raise
        finally:
            self.completion = parser.completion(incomplete=cut or not _finished(parser))
            await response.aclose()

    async def aclose(self) -> None:
        """Stop: abort the request; the completion keeps what arrived, marked incomplete."""
        self.aborted = True
        if self._response is not None:
            await self._response.aclose()


def _host_and_port(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)


def _finished(parser: object) -> bool:
    parts = getattr(parser, "parts", None)
    return parts is not None and parts.finish is not None


class ChatClient:
    def __init__(
        self,
        adapter: Adapter,
        transport: Transport | None = None,
        *,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self.adapter = adapter
        self.transport = transport or default_transport()
        self.retry = retry or adapter.retry_policy
        self._sleep = sleep  # injectable, so tests of the retry path do not wait

    async def send(self, request: Request) -> Response:
        """Send with retries; an error status raises the vendor's typed error.

        The request must go under the adapter's base URL (the key goes nowhere else), and a
        redirect is never followed: it raises, naming where it pointed.
        """
        self.adapter.check_destination(request.url)
        request = replace(request, follow_redirects=False)
        try:
            response = await send_with_retries(self.transport, request, self.retry, sleep=self._sleep)
        except APIConnectionError as e:
            raise self.adapter.explain_connection_error(e) from e
        if response.status < 200 or 300 <= response.status < 400:
            await response.aclose()
            raise self._redirect_error(request, response)
        if response.status >= 400:
            body = await response.aread()
            await response.aclose()
            raise self.adapter.map_error(response.status, response.headers, body)
        return response

    def _redirect_error(self, request: Request, response: Response) -> APIStatusError:
        location = response.headers.get("location")
        where = f"to {_host_and_port(urljoin(request.url, location))}" if location else "elsewhere"
        message = (f"the server redirected the request {where}; redirects are not followed, so the key is "
                   f"never sent to another address. Set the base URL to the final address instead.")
        return APIStatusError(redact(message, [self.adapter.api_key]), vendor=self.adapter.vendor,
                              status=response.status, type="redirect", headers=response.headers)

    def stream(self, request: ChatRequest) -> ChatStream:
        return ChatStream(self, request.model_copy(update={"stream": True}))

    async def complete(self, request: ChatRequest) -> Completion:
        """One non-streamed request (short calls only: long generations should stream)."""
        response = await self.send(self.adapter.build_request(request.model_copy(update={"stream": False})))
        body = await response.aread()
        await response.aclose()
        return self.adapter.parse_response(body)

    async def list_models(self) -> list[ModelInfo]:
        return self.adapter.parse_models(await self._read(self.adapter.models_request()))

    async def transcribe(self, audio: bytes, mime_type: str, *, chat_model: str, model: str | None = None,
                         language: str | None = None) -> str:
        """The words of a recorded clip, by the vendor's speech-to-text."""
        request = self.adapter.transcription_request(audio, mime_type, chat_model=chat_model, model=model,
                                                     language=language)
        return self.adapter.parse_transcription(await self._read(request))

    async def speak(self, text: str, *, voice: str | None = None, speed: float | None = None,
                    model: str | None = None) -> tuple[bytes, str]:
        """``text`` spoken by the vendor's voice: the audio's bytes and media type."""
        response = await self.send(self.adapter.speech_request(text, voice=voice, speed=speed, model=model))
        body = await response.aread()
        await response.aclose()
        return self.adapter.parse_speech(body, response.headers.get("content-type", ""))

    async def _read(self, request: Request) -> bytes:
        response = await self.send(request)
        body = await response.aread()
        await response.aclose()
        return body
