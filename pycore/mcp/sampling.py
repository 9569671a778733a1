"""Sampling (MCP 2025-11-25): a server asks the client's model for a completion (``sampling/createMessage``).

Nothing runs unseen. The request is shown to the user (who asks, the messages, the system prompt, which
model would answer and how many tokens it may use), who runs it as it is, edits it, or denies it; the answer
is shown too, and goes back to the server only when the user sends it. The model is the one of the
conversation the server's tool was called from, and a request may use at most the user's budget of tokens
(``max_tokens`` is the smaller of the server's and the user's).

What the user is shown is what is sent: :func:`shown` gives each message's text and its images (thumbnails on
the card), :func:`input_chars` its size; a request with more text than the user's limit, or from a server with
:data:`MAX_OPEN` requests already open, is refused without asking (and the user is told).

This module is the part without the user: :func:`to_messages` turns the server's messages into the core's,
:func:`edited` applies the user's edits (images kept), :func:`to_result` the model's answer into
``CreateMessageResult``. A denied request is answered with the
JSON-RPC error the specification shows for it (:data:`USER_REJECTED`).
"""

from __future__ import annotations

import base64
from typing import Any

from pycore.messages import Completion, ImagePart, Message, TextPart

USER_REJECTED = -1  # the error code MCP's own example uses for "User rejected sampling request"
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
STOP_REASONS = {"stop": "endTurn", "length": "maxTokens"}
MAX_OPEN = 3  # a server's requests for the model open at once; more are refused without asking the user


class SamplingDenied(Exception):
    """The user said no (to the request, or to sending its answer back), or nobody was there to ask."""


def to_messages(messages: list[dict[str, Any]]) -> list[Message]:
    """The server's messages as the core's: text and images as they are; audio and anything else as a note."""
    out = []
    for message in messages:
        role = "assistant" if message.get("role") == "assistant" else "user"
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        parts: list[TextPart | ImagePart] = []
        for block in blocks:
            block = block if isinstance(block, dict) else {}
            mime = str(block.get("mimeType") or "")
            if block.get("type") == "text":
                parts.append(TextPart(text=str(block.get("text", ""))))
            elif block.get("type") == "image" and mime in IMAGE_TYPES:
                parts.append(ImagePart(data=base64.b64decode(str(block.get("data", ""))), mime_type=mime))
            else:
                parts.append(TextPart(text=f"[{block.get('type', 'content')} not passed on to the model]"))
        out.append(Message(role=role, parts=list(parts)))
    return out


def shown(messages: list[Message]) -> list[dict[str, Any]]:
    """What the user sees of the request, which is all that is sent: each message's role, its text (other content
    named) and its images (type, size and the bytes as base64, drawn as thumbnails)."""
    return [{"role": message.role,
             "text": "\n".join(p.text for p in message.parts if isinstance(p, TextPart)),
             "images": [{"mime_type": p.mime_type, "bytes": len(p.data), "data": base64.b64encode(p.data).decode()}
                        for p in message.parts if isinstance(p, ImagePart)]} for message in messages]


def input_chars(messages: list[Message], system: str | None) -> int:
    """How many characters of text the request would send the model (its messages and system prompt)."""
    return len(system or "") + sum(len(p.text) for m in messages for p in m.parts if isinstance(p, TextPart))


def edited(messages: list[Message], texts: list[dict[str, str]]) -> list[Message]:
    """The request as the user edited it: each message's text replaced by theirs, its images kept (the user saw
    them and did not take them out)."""
    out = []
    for i, given in enumerate(texts):
        images = [p for p in messages[i].parts if isinstance(p, ImagePart)] if i < len(messages) else []
        role = "assistant" if given.get("role") == "assistant" else "user"
        out.append(Message(role=role, parts=[TextPart(text=str(given.get("text", ""))), *images]))
    return out


def to_result(completion: Completion, model: str) -> dict[str, Any]:
    reason = completion.finish_reason or "stop"
    return {"role": "assistant", "content": {"type": "text", "text": completion.text()}, "model": model,
            "stopReason": STOP_REASONS.get(reason, reason)}
