"""Tools from any source, and the names the model sees.

A :class:`AgentTool` is an MCP-form definition (name, description, inputSchema) plus an async
handler, the source it came from (``mcp:<server id>``, ``python:<set id>``, ``page``) and its MCP
annotations. A handler gets the arguments and a :class:`ToolContext` and returns a
:class:`ToolResult`; raising is fine (the loop turns it into an ``is_error`` result).

Names. Every vendor restricts function names:

- OpenAI (Chat and Responses), Anthropic, Ollama: ``^[a-zA-Z0-9_-]{1,64}$``;
- Gemini: starts with a letter or an underscore, then letters, digits, ``_ . : -``, at most 64.

The registry gives each tool one *model name* inside the intersection of those rules
(``^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$``), so a conversation can move from one vendor to another and
its tool calls still name tools every vendor accepts. Other characters become ``_``; a name that
clashes with another source's tool gets its source as a prefix (``weather__search``); a name too
long is cut and ends with a short hash of the full name, so two long names stay apart. The
registry maps model names back to the tool.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pycore.messages import ImagePart, TextPart, Tool

if TYPE_CHECKING:
    from pycore.contract import TaskHandle

MAX_NAME = 64
# A name every vendor takes (each adapter declares its own rule: ``Adapter.tool_name``), so a conversation
# keeps its tools when it moves to another vendor.
PORTABLE_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$")
MODEL_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})

ProgressCallback = Callable[..., None]  # (progress, total, message, task=None): task, an MCP task's status


@dataclass
class ToolContext:
    call_id: str
    timeout: float | None = None
    on_progress: ProgressCallback | None = None
    on_task: Callable[[TaskHandle], None] | None = None  # the call became a task on its MCP server: its handle


@dataclass
class ToolResult:
    """What a tool gave back.

    ``content`` holds MCP-style content items for the page (``{"type": "text", "text"}``,
    ``{"type": "image", "data", "mimeType"}``, audio, ``resource_link``, ``resource``), as the tool
    sent them. ``for_model`` is what the model gets; when ``None`` it is derived from ``content``
    (text as is, images the vendors take, a short note for the rest).
    """

    content: list[dict[str, Any]] = field(default_factory=list)
    is_error: bool = False
    structured: Any = None
    schema_problem: str | None = None  # how ``structured`` breaks the tool's outputSchema (shown, never fatal)
    for_model: list[TextPart | ImagePart] | None = None

    @classmethod
    def text(cls, text: str, *, is_error: bool = False) -> ToolResult:
        return cls(content=[{"type": "text", "text": text}], is_error=is_error)

    def model_content(self) -> list[TextPart | ImagePart]:
        if self.for_model is not None:
            return self.for_model
        return [_for_model(item) for item in self.content]

    def display_content(self) -> list[dict[str, Any]] | None:
        """The items as the tool sent them when the model's content does not carry them whole (resource links,
        resources, audio, images no model reads, or a content of its own for the model), else ``None``: the card
        then draws the model's content, which is the same."""
        whole = self.for_model is None and all(
            item.get("type") == "text" or (item.get("type") == "image" and _model_image(item)) for item in self.content)
        return None if whole else self.content


def _model_image(item: dict[str, Any]) -> bool:
    return str(item.get("mimeType") or item.get("mime_type") or "").lower() in MODEL_IMAGE_TYPES


def _for_model(item: dict[str, Any]) -> TextPart | ImagePart:
    kind = item.get("type")
    if kind == "text":
        return TextPart(text=str(item.get("text", "")))
    mime = str(item.get("mimeType") or item.get("mime_type") or "")
    if kind == "image" and _model_image(item):
        return ImagePart(data=item.get("data", ""), mime_type=mime.lower())
    if kind == "resource_link":
        return TextPart(text=f"[resource link: {item.get('name')} <{item.get('uri')}>, not fetched]")
    return TextPart(text=f"[{kind} {mime}: not shown to the model]".replace(" :", ":"))


Handler = Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]


@dataclass
class AgentTool:
    name: str  # the name in its source (MCP tool name, Python function name, page definition name)
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    source: str  # "mcp:<server id>", "python:<set id>", "page"
    annotations: dict[str, Any] | None = None
    changed: bool = False  # added or changed since its server was connected (tools/list_changed)

    @property
    def source_id(self) -> str:
        return self.source.split(":", 1)[-1]


def sanitize(name: str) -> str:
    """``name`` with every character outside ``[a-zA-Z0-9_-]`` replaced, starting with a letter or ``_``."""
    clean = re.sub(r"[^a-zA-Z0-9_-]", "_", name) or "_"
    return clean if re.match(r"[a-zA-Z_]", clean) else "_" + clean


def shorten(name: str, original: str, limit: int = MAX_NAME) -> str:
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(original.encode("utf-8")).hexdigest()[:8]
    return f"{name[: limit - 9]}_{digest}"


class ToolRegistry:
    """The tools of one run, each under a name every vendor accepts."""

    def __init__(self, tools: Iterable[AgentTool] = ()) -> None:
        self.tools: list[AgentTool] = list(tools)
        self._by_model_name: dict[str, AgentTool] = {}
        self._model_names: dict[int, str] = {}
        self._assign()

    def _assign(self) -> None:
        clean = [sanitize(tool.name) for tool in self.tools]
        counts: dict[str, set[str]] = {}
        for tool, name in zip(self.tools, clean, strict=True):
            counts.setdefault(name.lower(), set()).add(tool.source)
        for i, (tool, name) in enumerate(zip(self.tools, clean, strict=True)):
            if len(counts[name.lower()]) > 1:  # two sources offer the same name: both get their source
                name = f"{sanitize(tool.source_id)}__{name}"
            name = shorten(name, f"{tool.source}/{tool.name}")
            base, n = name, 2
            while name.lower() in (taken.lower() for taken in self._by_model_name):
                suffix = f"_{n}"
                name, n = base[: MAX_NAME - len(suffix)] + suffix, n + 1
            self._by_model_name[name] = tool
            self._model_names[i] = name

    def __len__(self) -> int:
        return len(self.tools)

    def model_name(self, tool: AgentTool) -> str:
        return self._model_names[next(i for i, t in enumerate(self.tools) if t is tool)]

    def resolve(self, model_name: str) -> AgentTool | None:
        return self._by_model_name.get(model_name)

    def items(self) -> list[tuple[str, AgentTool]]:
        return [(self._model_names[i], tool) for i, tool in enumerate(self.tools)]

    def definitions(self, *, exclude: Iterable[str] = ()) -> list[Tool]:
        skip = set(exclude)
        return [
            Tool(name=name, description=tool.description, inputSchema=tool.input_schema)
            for name, tool in self.items()
            if name not in skip
        ]
