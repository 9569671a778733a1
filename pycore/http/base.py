"""The seam's types: :class:`Request`, :class:`Response`, :class:`Transport` and the reading of redirects
(:mod:`pycore.http` tells what they promise). The transports import these from here, so the package's own
module, which picks a transport for the runtime, never forms a cycle with them."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import urljoin


@dataclass
class Request:
    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    timeout: float | None = 600.0  # to the headers; then the longest wait for each next piece of the body
    # False (always, in the core): a redirect is not followed but handed back as the response (status 3xx;
    # in a browser, status 0, an "opaque redirect" whose target stays hidden). True: every transport
    # follows it the way fetch's redirect: "follow" does, headers and all.
    follow_redirects: bool = False


class Response(ABC):
    status: int
    headers: dict[str, str]

    @abstractmethod
    def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body, chunk by chunk, as it arrives."""

    async def aread(self) -> bytes:
        chunks = [chunk async for chunk in self.aiter_bytes()]
        return b"".join(chunks)

    @abstractmethod
    async def aclose(self) -> None:
        """Release the connection; aborts the body if it is still streaming."""


class Transport(ABC):
    @abstractmethod
    async def send(self, request: Request) -> Response: ...

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release pooled connections, if the transport keeps any."""


def is_redirect(response: Response) -> bool:
    """A redirect handed back instead of followed: a 3xx, or status 0 (the browser's opaque redirect)."""
    return response.status == 0 or 300 <= response.status < 400


def redirect_target(url: str, response: Response) -> str | None:
    """Where a redirect answering a request to ``url`` pointed; ``None`` when the browser hides it."""
    location = response.headers.get("location")
    return urljoin(url, location) if location else None
