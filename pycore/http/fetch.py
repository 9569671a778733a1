"""The Pyodide transport, on the browser's ``fetch``. Only this module imports ``js`` / ``pyodide``.

The body is read through a ReadableStream reader, so each chunk reaches the parser as soon as the
browser has it (no buffering of the whole response); in the app's worker through ``web/body_pump.js``, which
hands Python what arrived since it last asked, at most once a frame. Every request owns an AbortController:
``aclose()`` (the user's Stop), cancelling the reading task, and a body that stalls for longer than
the request's ``timeout`` all abort the fetch. A request is sent with ``redirect: "manual"`` unless it
asks to follow redirects (nothing in the core does): a redirect comes back as status 0 (an "opaque
redirect": the browser hides its target; Node's fetch gives the 3xx and its ``location``) and is never
followed, so headers carrying a key, a token or the user's own values never travel to its target.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import JsException, to_js  # type: ignore[import-not-found]

from pycore.exceptions import APIConnectionError, APITimeoutError
from pycore.http.base import Request, Response, Transport


def page_origin() -> str | None:
    origin = getattr(getattr(js, "location", None), "origin", None)
    return str(origin) if origin and str(origin) != "null" else None


PUMP = "orizuru_body_pump"


def _reader(body: Any) -> Any:
    """What the body is read through: ``web/body_pump.js`` where the worker registered it (Python is handed what
    arrived since it last asked, at most once a frame, instead of being woken for every read), else the body's
    own reader (Pyodide without our worker). Both answer ``next()`` with a read's ``{done, value}``."""
    try:
        pump = __import__(PUMP)
    except ImportError:
        return _OwnReader(body.getReader())
    return pump.coalesce(body)


class _OwnReader:
    def __init__(self, reader: Any) -> None:
        self._reader = reader

    def next(self) -> Any:
        return self._reader.read()


class FetchResponse(Response):
    def __init__(self, response: Any, controller: Any, read_timeout: float | None = None) -> None:
        self._response = response
        self._controller = controller
        self._read_timeout = read_timeout
        self._done = False
        self.status = int(response.status)
        self.headers = {str(pair[0]).lower(): str(pair[1]) for pair in response.headers.entries()}

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        if self._response.body is None:
            return
        reader = _reader(self._response.body)
        try:
            while True:
                try:
                    result = await asyncio.wait_for(reader.next(), self._read_timeout)
                except TimeoutError as e:
                    raise APITimeoutError(
                        f"the response stalled: nothing arrived for {self._read_timeout:g} s"
                    ) from e
                except JsException as e:
                    raise APIConnectionError(f"connection lost while reading the body: {e}") from e
                if result.done:
                    break
                yield result.value.to_bytes()
        except BaseException:
            self._abort()
            raise
        finally:
            self._done = True

    def _abort(self) -> None:
        if not self._done:
            self._done = True
            self._controller.abort()

    async def aclose(self) -> None:
        self._abort()


class FetchTransport(Transport):
    async def send(self, request: Request) -> Response:
        controller = js.AbortController.new()
        init: dict[str, Any] = {
            "method": request.method,
            "headers": to_js(request.headers, dict_converter=js.Object.fromEntries),
            "signal": controller.signal,
            "redirect": "follow" if request.follow_redirects else "manual",
        }
        if request.body is not None:
            init["body"] = to_js(request.body)
        options = to_js(init, dict_converter=js.Object.fromEntries)
        try:
            response = await asyncio.wait_for(js.fetch(request.url, options), request.timeout)
        except TimeoutError as e:
            controller.abort()
            raise APITimeoutError() from e
        except asyncio.CancelledError:
            controller.abort()
            raise
        except JsException as e:  # TypeError "Failed to fetch": network, DNS, CORS, refused
            raise APIConnectionError(f"fetch failed: {e}") from e
        return FetchResponse(response, controller, request.timeout)


async def no_cors_reachable(url: str, timeout: float) -> bool:
    """Browser only: does ``url`` answer at all? A ``no-cors`` fetch resolves (opaque) for any HTTP answer and
    throws only when nothing answered. A server that accepts the connection but sends nothing within
    ``timeout`` seconds counts as not answering (the request is aborted): the browser itself would wait
    minutes. (The CORS doctor's probe, :mod:`pycore.methods.doctor`.)"""
    controller = js.AbortController.new()
    options = to_js({"mode": "no-cors", "cache": "no-store", "credentials": "omit", "signal": controller.signal},
                    dict_converter=js.Object.fromEntries)
    try:
        await asyncio.wait_for(js.fetch(url, options), timeout)
    except TimeoutError:
        controller.abort()
        return False
    except asyncio.CancelledError:
        controller.abort()
        raise
    except JsException:
        return False
    return True
