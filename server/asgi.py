"""Small ASGI helpers shared by the relay's endpoints."""

from __future__ import annotations

from starlette.types import Receive


async def read_body(receive: Receive) -> bytes:
    """The whole request body (what arrived, if the client goes away); size limits are enforced upstream (413)."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)
