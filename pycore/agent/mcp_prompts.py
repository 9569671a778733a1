"""An MCP prompt (``prompts/get``) as conversation messages, for slash commands.

Text stays text; an image the vendors take becomes an image part; an embedded text resource
becomes text headed by its URI; audio, blobs and resource links become a short note (links are
never fetched).
"""

from __future__ import annotations

import mcp_types as t

from pycore.agent.tools import MODEL_IMAGE_TYPES
from pycore.messages import ImagePart, Message, TextPart


def prompt_messages(result: t.GetPromptResult) -> list[Message]:
    return [Message(role=message.role, parts=[_part(message.content)]) for message in result.messages]


def _part(block: t.ContentBlock) -> TextPart | ImagePart:
    if isinstance(block, t.TextContent):
        return TextPart(text=block.text)
    if isinstance(block, t.ImageContent) and block.mime_type.lower() in MODEL_IMAGE_TYPES:
        return ImagePart(data=block.data, mime_type=block.mime_type.lower())
    if isinstance(block, t.EmbeddedResource) and isinstance(block.resource, t.TextResourceContents):
        return TextPart(text=f"[resource {block.resource.uri}]\n{block.resource.text}")
    if isinstance(block, t.ResourceLink):
        return TextPart(text=f"[resource link: {block.name} <{block.uri}>, not fetched]")
    return TextPart(text=f"[{getattr(block, 'type', 'content')} not shown to the model]")
