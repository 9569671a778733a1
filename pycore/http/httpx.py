"""The CPython transport, on ``httpx.AsyncClient``. Never imported under Pyodide.

Redirects as in the browser's fetch: handed back as the response unless the request asks to follow them
(``follow_redirects``), so a test in CPython sees what the page would.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

from pycore.exceptions import APIConnectionError, APITimeoutError
from pycore.http.base import Request, Response, Transport

CONNECT_TIMEOUT = 5.0


class HttpxResponse(Response):
    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.status = response.status_code
        self.headers = {k.lower(): v for k, v in response.headers.items()}

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.aiter_bytes():
                yield chunk
        except httpx.TimeoutException as e:
            raise APITimeoutError() from e
        except (httpx.TransportError, httpx.StreamError) as e:
            raise APIConnectionError(f"connection lost while reading the body: {type(e).__name__}") from e

    async def aclose(self) -> None:
        await self._response.aclose()


class HttpxTransport(Transport):
    def __init__(self, client: httpx.AsyncClient | None = None) -> None:
        self._client = client or httpx.AsyncClient(follow_redirects=False)
        self._owned = client is None

    async def send(self, request: Request) -> Response:
        timeout = httpx.Timeout(request.timeout, connect=min(CONNECT_TIMEOUT, request.timeout or CONNECT_TIMEOUT))
        built = self._client.build_request(
            request.method, request.url, headers=request.headers, content=request.body, timeout=timeout
        )
        try:
            response = await self._client.send(built, stream=True, follow_redirects=request.follow_redirects)
        except httpx.TimeoutException as e:
            raise APITimeoutError() from e
        except httpx.TransportError as e:
            raise APIConnectionError(f"could not reach {built.url.host}: {type(e).__name__}") from e
        return HttpxResponse(response)

    async def aclose(self) -> None:
        if self._owned:
            await self._client.aclose()
