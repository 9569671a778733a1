"""Conversation helpers shared by the request builders (vendor-neutral)."""

from __future__ import annotations

from pycore.messages import DocumentPart, ImagePart, Message, TextPart, ToolCallPart, ToolResultPart

PDF = "application/pdf"


def tool_names(messages: list[Message]) -> dict[str, str]:
    """call id -> tool name, to fill tool results that do not carry the name."""
    return {p.id: p.name for m in messages for p in m.parts if isinstance(p, ToolCallPart)}


def result_text(part: ToolResultPart) -> str:
    """A tool result as plain text, for vendors whose tool messages take text only."""
    texts = [c.text for c in part.content if isinstance(c, TextPart)]
    images = sum(1 for c in part.content if isinstance(c, ImagePart))
    text = "\n".join(texts)
    if images:
        text += f"\n[{images} image(s) attached below]" if text else f"[{images} image(s) attached below]"
    return text


def result_images(part: ToolResultPart) -> list[ImagePart]:
    return [c for c in part.content if isinstance(c, ImagePart)]


def data_url(item: ImagePart | DocumentPart) -> str:
    return f"data:{item.mime_type};base64,{item.base64()}"


def is_pdf(part: DocumentPart) -> bool:
    """A PDF whose bytes were kept: the vendors that read PDF get the file itself."""
    return part.mime_type == PDF and part.data is not None
