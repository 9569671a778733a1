"""Tool results → what the model and the page get. Pure logic, no I/O.

Every MCP content type is mapped (MCP 2025-11-25 "Tool Result"):

- ``text`` → text; ``image`` with an allowed MIME type → image; other images and ``audio`` → a text
  note, the raw block kept in ``attachments`` for the page;
- ``resource_link`` → a text note naming the URI; it is **never fetched** (``file://``, intranet
  URLs, ... are the server's claims, not ours to open);
- embedded ``resource`` → its text, or an image / a note for a blob;
- ``structuredContent`` → JSON text when the server sent no text, checked against the tool's
  ``outputSchema`` (a violation is noted, never fatal);
- ``isError`` → ``is_error``: the error text goes to the model, which may recover.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any

import mcp_types as t

from pycore.mcp.schema import check

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


@dataclass
class ToolOutput:
    """A mapped ``tools/call`` result. ``content`` holds plain-JSON parts: ``{"type": "text", "text"}``
    or ``{"type": "image", "data": base64, "mime_type"}`` (the shape of ``pycore.messages`` result parts)."""

    content: list[dict[str, Any]] = field(default_factory=list)
    is_error: bool = False
    structured: Any = None
    schema_violation: str | None = None
    attachments: list[dict[str, Any]] = field(default_factory=list)  # audio, odd images, blobs, links

    def text(self) -> str:
        return "\n".join(part["text"] for part in self.content if part["type"] == "text")


def map_result(result: t.CallToolResult, output_schema: dict[str, Any] | None = None) -> ToolOutput:
    out = ToolOutput(is_error=bool(result.is_error))
    for block in result.content:
        _map_block(block, out)
    if result.structured_content is not None:
        _map_structured(result.structured_content, output_schema, out)
    return out


def _map_block(block: t.ContentBlock, out: ToolOutput) -> None:
    if isinstance(block, t.TextContent):
        out.content.append(_text(block.text))
    elif isinstance(block, t.ImageContent):
        _binary("image", block.data, block.mime_type, out)
    elif isinstance(block, t.AudioContent):
        _binary("audio", block.data, block.mime_type, out)
    elif isinstance(block, t.ResourceLink):
        out.content.append(_text(f"[resource link: {block.name} <{block.uri}>, not fetched]"))
        out.attachments.append({"type": "resource_link", "uri": str(block.uri), "name": block.name,
                                "mime_type": block.mime_type})
    elif isinstance(block, t.EmbeddedResource):
        _map_embedded(block.resource, out)
    else:
        out.content.append(_text(f"[unsupported content type {getattr(block, 'type', '?')!r}]"))


def _map_embedded(resource: t.TextResourceContents | t.BlobResourceContents, out: ToolOutput) -> None:
    if isinstance(resource, t.TextResourceContents):
        out.content.append(_text(f"[resource {resource.uri}]\n{resource.text}"))
    else:
        _binary("resource", resource.blob, resource.mime_type or "application/octet-stream", out, uri=str(resource.uri))


def _binary(kind: str, data: str, mime_type: str, out: ToolOutput, uri: str | None = None) -> None:
    size = _decoded_size(data)
    if size is None:
        out.content.append(_text(f"[{kind} {mime_type}: invalid base64, dropped]"))
        return
    if mime_type.lower() in IMAGE_TYPES:
        out.content.append({"type": "image", "data": data, "mime_type": mime_type.lower()})
        return
    label = f"{kind} {uri}" if uri else kind
    out.content.append(_text(f"[{label}: {mime_type}, {size} bytes, not shown to the model]"))
    out.attachments.append({"type": kind, "data": data, "mime_type": mime_type, "uri": uri})


def _decoded_size(data: str) -> int | None:
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return None


def _map_structured(value: Any, output_schema: dict[str, Any] | None, out: ToolOutput) -> None:
    out.structured = value
    if output_schema is not None:
        problem = check(value, output_schema)
        if problem:
            out.schema_violation = problem
            out.content.append(_text(f"[structured result does not match the tool's outputSchema: {problem}]"))
    if not any(part["type"] == "text" for part in out.content):
        out.content.append(_text(json.dumps(value, ensure_ascii=False)))


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}
