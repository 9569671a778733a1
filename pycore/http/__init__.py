"""The transport seam: the only place where bytes leave the core.

Adapters and the MCP client build a :class:`Request`, hand it to a :class:`Transport` and read the
:class:`Response` body as an async iterator of byte chunks, fed as they arrive to the push decoders
in :mod:`pycore.decoders`. Nothing else about HTTP leaks into them. Implementations:

- :mod:`pycore.http.httpx`: CPython, on ``httpx.AsyncClient``;
- :mod:`pycore.http.fetch`: Pyodide, on the browser's ``fetch`` (streamed through a ReadableStream
  reader, aborted through an AbortController);
- :mod:`pycore.http.replay`: recorded bodies, for tests and the replay CLI, in both runtimes.

Contract for implementations:

- ``send`` returns as soon as the status and headers are in; the body is not read yet;
- ``timeout`` bounds the wait for the headers and then each wait for more body: a stream that
  stalls raises :class:`~pycore.exceptions.APITimeoutError` from the body iterator, never hangs;
- header names in ``Response.headers`` are lower-case;
- network failures raise :class:`~pycore.exceptions.APIConnectionError` (timeouts
  :class:`~pycore.exceptions.APITimeoutError`), from ``send`` and from the body iterator alike;
- ``aclose`` is idempotent and aborts a body still streaming (that is what Stop does); cancelling
  the task that iterates the body must abort the request too;
- a redirect is never followed unless the request asks (``follow_redirects``): it comes back as the
  response, a 3xx with its ``location`` (httpx; Node's fetch) or status 0, an "opaque redirect" whose
  target the browser hides (fetch with ``redirect: "manual"``). :func:`is_redirect` tells both. A
  followed redirect would re-send every header of the request (a key, a token, the user's own
  headers) and its body to wherever it points (SECURITY.md V1, T-U1), so nothing in the core asks.

Retries live beside the seam, not in it: :mod:`pycore.http.retry`; so does the one reading of where a
URL points, as the browser reads it, for every origin check: :mod:`pycore.http.origin`.
"""

from __future__ import annotations

from pycore.http.base import Request, Response, Transport, is_redirect, redirect_target


def page_origin() -> str | None:
    """The origin of the page the core runs in (``https://app.example``); None outside a browser."""
    import sys

    if sys.platform == "emscripten":
        from pycore.http.fetch import page_origin as origin

        return origin()
    return None


def default_transport() -> Transport:
    """The transport for the runtime we are in: fetch under Pyodide, httpx elsewhere."""
    import sys

    if sys.platform == "emscripten":
        from pycore.http.fetch import FetchTransport

        return FetchTransport()
    from pycore.http.httpx import HttpxTransport

    return HttpxTransport()


__all__ = ["Request", "Response", "Transport", "default_transport", "is_redirect", "page_origin", "redirect_target"]
