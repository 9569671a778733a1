"""MCP resources attached to a message, and prompts offered as slash commands. Pure, no I/O.

- :func:`resource_parts`: a ``resources/read`` result → message parts. Text becomes text headed by its
  URI (the model sees where it came from; SECURITY.md X7: provenance is labelled); a blob that really is
  a PNG/JPEG/GIF/WebP (magic bytes, not the declared type) becomes an image; other blobs a short note.
- :func:`slash_commands` / :func:`parse_slash_command`: prompts as ``/name arg=value …`` commands, and the
  text the user typed back into the prompt and its arguments, with the missing required ones named.
  ``prompts/get`` itself and its messages are :mod:`pycore.agent.mcp_prompts`.
"""

from __future__ import annotations

import base64
import binascii
import re
import shlex
from collections.abc import Iterable
from typing import Any

import mcp_types as t

from pycore.mcp.icons import sniff
from pycore.messages import ImagePart, TextPart

MAX_ATTACHED_TEXT = 200_000  # characters of one resource given to the model
MAX_ATTACHED_IMAGE = 20 * 1024 * 1024
_COMMAND = re.compile(r"^/([A-Za-z0-9_.\-:]+)(?:\s+(.*))?$", re.DOTALL)


def resource_parts(result: t.ReadResourceResult, *, name: str | None = None) -> list[TextPart | ImagePart]:
    parts: list[TextPart | ImagePart] = []
    for contents in result.contents:
        label = f"{name} <{contents.uri}>" if name else f"<{contents.uri}>"
        if isinstance(contents, t.TextResourceContents):
            text = contents.text
            cut = len(text) > MAX_ATTACHED_TEXT
            body = text[:MAX_ATTACHED_TEXT] + ("\n[… cut: the resource is longer]" if cut else "")
            parts.append(TextPart(text=f"[attached resource {label}]\n{body}\n[end of resource {label}]"))
        else:
            parts.append(_blob_part(contents, label))
    return parts


def _blob_part(contents: t.BlobResourceContents, label: str) -> TextPart | ImagePart:
    declared = contents.mime_type or "application/octet-stream"
    try:
        data = base64.b64decode(contents.blob, validate=True)
    except (binascii.Error, ValueError):
        return TextPart(text=f"[attached resource {label}: invalid base64, dropped]")
    real = sniff(data)
    if real is not None and len(data) <= MAX_ATTACHED_IMAGE:
        return ImagePart(data=data, mime_type=real)
    return TextPart(text=f"[attached resource {label}: {declared}, {len(data)} bytes, not shown to the model]")


def slash_commands(prompts: Iterable[t.Prompt], server: str | None = None) -> list[dict[str, Any]]:
    """``[{"command": "/name", "name", "server"?, "description", "arguments": [{name, description, required}]}]``."""
    commands = []
    for prompt in prompts:
        entry: dict[str, Any] = {
            "command": f"/{prompt.name}", "name": prompt.name, "description": prompt.description or prompt.title or "",
            "arguments": [{"name": a.name, "description": a.description or "", "required": bool(a.required)}
                          for a in prompt.arguments or []],
        }
        if server is not None:
            entry["server"] = server
        commands.append(entry)
    return commands


def parse_slash_command(text: str, prompts: Iterable[t.Prompt]) -> tuple[t.Prompt, dict[str, str]] | None:
    """``/name key=value "key two"="a b" …`` → the prompt and its arguments; ``None`` when ``text`` is not a
    command for one of ``prompts``. A lone value fills the first argument (``/summarize the text``).
    Raises ``ValueError`` naming missing required arguments, unknown ones, or bad quoting."""
    found = _COMMAND.match(text.strip())
    if found is None:
        return None
    prompt = next((p for p in prompts if p.name == found[1]), None)
    if prompt is None:
        return None
    declared = [a.name for a in prompt.arguments or []]
    try:
        words = shlex.split(found[2] or "")
    except ValueError as e:
        raise ValueError(f"/{prompt.name}: {e}") from e
    arguments: dict[str, str] = {}
    loose: list[str] = []
    for word in words:
        key, equals, value = word.partition("=")
        if equals and key in declared:
            arguments[key] = value
        elif equals and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", key):
            raise ValueError(f"/{prompt.name} has no argument {key!r} (it takes: {', '.join(declared) or 'none'})")
        else:
            loose.append(word)
    if loose:
        first = next((name for name in declared if name not in arguments), None)
        if first is None:
            raise ValueError(f"/{prompt.name}: {' '.join(loose)!r} does not fit any argument")
        arguments[first] = " ".join(loose)
    missing = [a.name for a in prompt.arguments or [] if a.required and a.name not in arguments]
    if missing:
        raise ValueError(f"/{prompt.name} needs {', '.join(missing)} (e.g. /{prompt.name} {missing[0]}=…)")
    return prompt, arguments


__all__ = ["parse_slash_command", "resource_parts", "slash_commands"]
