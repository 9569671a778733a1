"""JSON-RPC framing on the official wire types: encode what we send, parse and classify what we get.

No I/O. Batches were removed from MCP in 2025-06-18, but a server speaking 2025-03-26 may still send
an array, so :func:`parse` accepts one and returns its elements.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types.jsonrpc import (
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from pycore.mcp.errors import MCPProtocolError

__all__ = ["encode", "error_response", "notification", "parse", "request", "response"]


def request(id: int | str, method: str, params: dict[str, Any] | None = None) -> JSONRPCRequest:
    return JSONRPCRequest(jsonrpc="2.0", id=id, method=method, params=params)


def notification(method: str, params: dict[str, Any] | None = None) -> JSONRPCNotification:
    return JSONRPCNotification(jsonrpc="2.0", method=method, params=params)


def response(id: int | str, result: dict[str, Any]) -> JSONRPCResponse:
    return JSONRPCResponse(jsonrpc="2.0", id=id, result=result)


def error_response(id: int | str | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=id, error=ErrorData(code=code, message=message))


def encode(message: JSONRPCMessage) -> bytes:
    return message.model_dump_json(by_alias=True, exclude_none=True).encode()


def parse(body: bytes | str) -> list[JSONRPCMessage]:
    """One message (or a legacy batch) from a body; anything else is a :class:`MCPProtocolError`."""
    try:
        value = json.loads(body)
    except ValueError as e:
        raise MCPProtocolError(f"the server sent a body that is not JSON: {_preview(body)}") from e
    items = value if isinstance(value, list) else [value]
    return [_message(item) for item in items]


def _message(item: Any) -> JSONRPCMessage:
    if isinstance(item, dict) and "id" in item and "result" in item and "error" not in item:
        if not isinstance(item["result"], dict):
            raise MCPProtocolError(f"JSON-RPC result must be an object: {_preview(json.dumps(item))}")
    try:
        return jsonrpc_message_adapter.validate_python(item)
    except ValidationError as e:
        shown = _preview(json.dumps(item))
        raise MCPProtocolError(f"the server sent a message that is not JSON-RPC 2.0: {shown}") from e


def _preview(body: bytes | str, limit: int = 120) -> str:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    return repr(text[:limit] + ("…" if len(text) > limit else ""))
