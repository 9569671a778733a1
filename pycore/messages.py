"""The unified conversation model: one shape for every vendor.

A conversation is a list of :class:`Message`, each a list of typed parts. Vendor adapters turn a
:class:`ChatRequest` into their own wire format and turn the vendor's stream back into
:data:`Event` values and, at the end, one :class:`Completion`.

What is normalized and what is kept raw:

- finish reasons become one of :data:`FinishReason`; the vendor's own value stays beside it;
- reasoning keeps the vendor's opaque ``signature`` / ``encrypted`` content and names the vendor that
  produced it, because only that vendor can verify it on the next turn;
- anything else vendor-specific rides in ``provider_details``, never inside ids or text.

Tools are declared once in MCP form: ``{"name", "description", "inputSchema"}``.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_serializer, field_validator

from pycore.exceptions import UnsupportedContentError

Vendor = Literal["openai", "openai-responses", "anthropic", "gemini", "ollama", "fake"]
FinishReason = Literal["stop", "length", "tool_calls", "content_filter", "refusal", "error", "other"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False, populate_by_name=True)


# --------------------------------------------------------------------------------------------- parts
class TextPart(_Model):
    type: Literal["text"] = "text"
    text: str
    refusal: bool = False  # the model declined (OpenAI ``refusal``): shown, but not counted as answer text
    vendor: str | None = None
    provider_details: dict[str, Any] | None = None


IMAGE_MEDIA_TYPE = r"^image/[\w.+-]+$"  # what a page may put in a data: URL's type (checked again on import)
MEDIA_TYPE = r"^[\w.+-]+/[\w.+-]+$"


class ImagePart(_Model):
    type: Literal["image"] = "image"
    data: bytes
    mime_type: str = Field(pattern=IMAGE_MEDIA_TYPE, description="an image media type")

    @field_validator("data", mode="before")
    @classmethod
    def _from_base64(cls, value: Any) -> Any:
        return base64.b64decode(value) if isinstance(value, str) else value

    @field_serializer("data", when_used="json")
    def _to_base64(self, value: bytes) -> str:
        return base64.b64encode(value).decode("ascii")

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")


class DocumentPart(_Model):
    """A file the user attached, labelled with its name. ``text`` is what it says (a text file's content, the
    text extracted from a PDF); ``data`` its bytes, kept where a vendor reads that type of file itself (PDF).
    Each adapter sends the bytes to a vendor that reads the type natively, otherwise the text under the
    file's name, so a conversation with documents continues on any vendor."""

    type: Literal["document"] = "document"
    name: str = Field(min_length=1, description="a file name")
    mime_type: str = Field(pattern=MEDIA_TYPE, description="a media type")
    text: str | None = None
    data: bytes | None = None

    @field_validator("data", mode="before")
    @classmethod
    def _from_base64(cls, value: Any) -> Any:
        return base64.b64decode(value) if isinstance(value, str) else value

    @field_serializer("data", when_used="json")
    def _to_base64(self, value: bytes | None) -> str | None:
        return None if value is None else base64.b64encode(value).decode("ascii")

    def base64(self) -> str:
        return base64.b64encode(self.data or b"").decode("ascii")

    def is_audio(self) -> bool:
        """A recorded clip whose bytes were kept: the vendors that take audio get it, the others refuse it."""
        return self.mime_type.startswith("audio/") and self.data is not None

    def labelled_text(self) -> str:
        """The text under the file's name, for a vendor that does not read this type itself."""
        if self.is_audio() and self.text is None:
            raise UnsupportedContentError(
                f"{self.name} is an audio clip, and this vendor does not take audio: send it to a vendor that does "
                "(OpenAI, Gemini), or remove the clip")
        if self.text is None:
            raise UnsupportedContentError(
                f"{self.name} ({self.mime_type}) has no readable text, and this vendor does not read the file itself: "
                "send it to a vendor that reads PDF (OpenAI, Anthropic, Gemini) or attach it as text")
        name = self.name.replace('"', "'")
        return f'<file name="{name}" type="{self.mime_type}">\n{self.text}\n</file>'


class ReasoningPart(_Model):
    type: Literal["reasoning"] = "reasoning"
    text: str = ""
    vendor: str | None = None  # who produced it; only that vendor gets signature/encrypted back
    signature: str | None = None  # Anthropic ``signature``, Gemini ``thoughtSignature``
    encrypted: str | None = None  # Anthropic ``redacted_thinking.data``, OpenAI ``encrypted_content``
    redacted: bool = False
    provider_details: dict[str, Any] | None = None


class ToolCallPart(_Model):
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    # The arguments text as the model wrote it, when it was not a JSON object (cut off, broken): ``arguments`` is
    # then ``{}`` and the call is not run (pycore.agent.loop); the page shows this text on the call's card.
    raw_arguments: str | None = None
    id_synthesized: bool = False  # the vendor sent no id (Gemini, older Ollama): we made a stable one
    vendor: str | None = None
    provider_details: dict[str, Any] | None = None


ResultContent = Annotated[TextPart | ImagePart, Field(discriminator="type")]


class AskedEntry(_Model):
    """What a tool's server asked the user during the call (an elicitation form or URL, a sampling request, or one
    refused without asking) and what the user answered: the page records it, the card shows it again."""

    id: str
    kind: Literal["form", "url", "sampling", "refused"]
    asker: str  # the server, as the page names it
    message: str = ""
    url: str | None = None
    action: str | None = None  # accept, decline, cancel, approve, deny, send, refused...
    content: dict[str, Any] | None = None  # the form's answer
    answer: str | None = None  # the answer as the card words it


class AppViewRef(_Model):
    """The MCP App view a call of a server's tool gets: its ``ui://`` resource on that server."""

    server: str  # the page's id of the server
    uri: str
    tool: str  # the tool's own name on its server
    arguments: dict[str, Any] = Field(default_factory=dict)


ArtifactType = Literal["html", "svg", "mermaid", "markdown"]


class ArtifactRef(_Model):
    """A document the model made on purpose with the page's ``artifact`` tool (or a revision of one: the same ``id``
    again). The page keeps it on the call's result; its versions are the results of the calls with that ``id`` along
    the conversation, in order, and the artifact panel shows them (web/artifacts/)."""

    id: str = Field(min_length=1, max_length=200)
    type: ArtifactType
    title: str = Field("", max_length=500)
    content: str


class ToolDisplay(_Model):
    """What a tool result's card shows beyond what the model is sent (``ToolResultPart.content``). The core fills
    what it knows when the call ends; the page adds what only it knows (``denied``, ``asked``, ``files``, ``app``,
    ``artifact``).
    Adapters never send it to a vendor."""

    # The server's content items (MCP) when the model's content does not carry them whole (resource links,
    # resources, audio, images a model cannot read): the card draws these instead.
    content: list[dict[str, Any]] | None = None
    structured: Any = None  # the tool's structuredContent
    schema_problem: str | None = None  # how ``structured`` breaks the tool's outputSchema: flagged, not hidden
    duration_ms: float | None = None
    # A transcript carries no ``false`` nor empty list for each call: these are left out when they say nothing.
    stopped: bool = Field(False, exclude_if=lambda v: not v)  # the user's Stop cut it short or kept it from running
    denied: bool = Field(False, exclude_if=lambda v: not v)  # the user declined to run it
    source: str | None = None  # the tool's source ("mcp:<server id>", ...): where its resource links are read
    app: AppViewRef | None = None
    asked: list[AskedEntry] = Field(default_factory=list, exclude_if=lambda v: not v)
    files: list[DocumentPart] = Field(default_factory=list, exclude_if=lambda v: not v)  # what the code wrote
    artifact: ArtifactRef | None = None  # what the page's ``artifact`` tool kept (one version of it)


class ToolResultPart(_Model):
    type: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str | None = None  # filled from the matching call when absent (Gemini needs it)
    content: list[ResultContent] = Field(default_factory=list)
    is_error: bool = False
    display: ToolDisplay | None = None  # for the page's card only; never sent to a vendor


Part = Annotated[TextPart | ImagePart | DocumentPart | ReasoningPart | ToolCallPart | ToolResultPart,
                 Field(discriminator="type")]


class Message(_Model):
    """One turn. Tool results travel in ``user`` messages (as in MCP and Anthropic)."""

    role: Literal["user", "assistant"]
    parts: list[Part] = Field(default_factory=list)

    @classmethod
    def user(cls, text: str) -> Message:
        return cls(role="user", parts=[TextPart(text=text)])

    @classmethod
    def assistant(cls, text: str) -> Message:
        return cls(role="assistant", parts=[TextPart(text=text)])


# --------------------------------------------------------------------------------------------- request
class Tool(_Model):
    """An MCP tool declaration: ``{"name", "description", "inputSchema"}``."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"}, alias="inputSchema")


class NamedToolChoice(_Model):
    name: str


ToolChoice = Literal["auto", "none", "required"] | NamedToolChoice


Effort = Literal["low", "medium", "high"]
EFFORT_BUDGETS: dict[str, int] = {"low": 2048, "medium": 8192, "high": 24576}  # tokens of thinking per effort


class Reasoning(_Model):
    """How much the model may think before it answers: an effort (OpenAI) or a token budget (Anthropic,
    Gemini). Each adapter declares which it takes (``Adapter.reasoning``) and reads it with
    :meth:`as_effort` or :meth:`as_budget`, so a setting made for one vendor still means something on another."""

    effort: Effort | None = None
    budget_tokens: int | None = Field(None, ge=1024)

    def as_effort(self) -> Effort | None:
        if self.effort is not None or self.budget_tokens is None:
            return self.effort
        return "low" if self.budget_tokens <= EFFORT_BUDGETS["low"] else \
            "medium" if self.budget_tokens <= EFFORT_BUDGETS["medium"] else "high"

    def as_budget(self) -> int | None:
        return self.budget_tokens if self.budget_tokens is not None else \
            EFFORT_BUDGETS[self.effort] if self.effort is not None else None


class ChatRequest(_Model):
    model: str
    messages: list[Message]
    tools: list[Tool] = Field(default_factory=list)
    tool_choice: ToolChoice | None = None
    system: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    reasoning: Reasoning | None = None
    stream: bool = True
    vendor_options: dict[str, Any] = Field(default_factory=dict)  # merged into the body untouched


# --------------------------------------------------------------------------------------------- events
# Events are plain slotted dataclasses, not validated models: a stream makes one per vendor event,
# and building them must cost next to nothing (bench/stream). They are made only by the parts
# manager from values it already checked. Pydantic still validates and dumps them when they sit in
# a model or a TypeAdapter; ``model_dump`` / ``model_dump_json`` do the same for a single event.
class _Event:
    __slots__ = ()

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        """As pydantic's ``BaseModel.model_dump`` (``mode``, ``exclude_none``... are passed through)."""
        result: dict[str, Any] = _event_adapter(type(self)).dump_python(self, **kwargs)
        return result

    def model_dump_json(self, **kwargs: Any) -> str:
        return _event_adapter(type(self)).dump_json(self, **kwargs).decode()


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def _event_adapter(cls: type) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


@dataclass(slots=True, kw_only=True)
class TextDelta(_Event):
    type: Literal["text_delta"] = "text_delta"
    index: int
    text: str
    refusal: bool = False


@dataclass(slots=True, kw_only=True)
class ReasoningDelta(_Event):
    type: Literal["reasoning_delta"] = "reasoning_delta"
    index: int
    text: str


@dataclass(slots=True, kw_only=True)
class ToolCallStart(_Event):
    type: Literal["tool_call_start"] = "tool_call_start"
    index: int
    id: str
    name: str


@dataclass(slots=True, kw_only=True)
class ToolCallArgsDelta(_Event):
    type: Literal["tool_call_args_delta"] = "tool_call_args_delta"
    index: int
    delta: str


@dataclass(slots=True, kw_only=True)
class ToolCallEnd(_Event):
    type: Literal["tool_call_end"] = "tool_call_end"
    index: int
    id: str
    name: str
    arguments: dict[str, Any]


class Usage(_Model):
    input_tokens: int | None = None
    output_tokens: int | None = None
    details: dict[str, Any] | None = None  # the vendor's raw usage object


@dataclass(slots=True, kw_only=True)
class UsageEvent(_Event):
    type: Literal["usage"] = "usage"
    usage: Usage


@dataclass(slots=True, kw_only=True)
class FinishEvent(_Event):
    type: Literal["finish"] = "finish"
    reason: FinishReason
    raw: str | None = None


class ErrorInfo(_Model):
    code: str | None = None  # one of pycore.contract.ERROR_CODES: what the page branches on
    status: int | None = None  # HTTP status; that of the stream (200) for an error sent inside it
    type: str | None = None
    message: str
    vendor: str | None = None
    host: str | None = None  # a vendor that could not be reached at all (no response): its host[:port]


@dataclass(slots=True, kw_only=True)
class ErrorEvent(_Event):
    type: Literal["error"] = "error"
    error: ErrorInfo


Event = Annotated[
    TextDelta
    | ReasoningDelta
    | ToolCallStart
    | ToolCallArgsDelta
    | ToolCallEnd
    | UsageEvent
    | FinishEvent
    | ErrorEvent,
    Field(discriminator="type"),
]


# --------------------------------------------------------------------------------------------- result
class Completion(_Model):
    """The whole answer, rebuilt from the same parts the stream events came from."""

    vendor: str
    message: Message
    finish_reason: FinishReason | None = None
    raw_finish_reason: str | None = None
    usage: Usage | None = None
    error: ErrorInfo | None = None
    incomplete: bool = False  # cut off (dropped connection, Stop, mid-stream error): what arrived is kept
    model: str | None = None
    response_id: str | None = None

    def text(self, *, refusal: bool = False) -> str:
        return "".join(p.text for p in self.message.parts if isinstance(p, TextPart) and p.refusal == refusal)

    def reasoning(self) -> str:
        return "".join(p.text for p in self.message.parts if isinstance(p, ReasoningPart))

    def tool_calls(self) -> list[ToolCallPart]:
        return [p for p in self.message.parts if isinstance(p, ToolCallPart)]

    def summary(self) -> dict[str, Any]:
        """The flat result shape of ``tests/fixtures/vendors/*.expected.json`` and the replay CLI."""
        usage = self.usage or Usage()
        out: dict[str, Any] = {
            "text": self.text(),
            "reasoning": self.reasoning(),
            "tool_calls": [
                {"id": None if c.id_synthesized else c.id, "name": c.name, "arguments": c.arguments}
                | ({} if c.raw_arguments is None else {"raw_arguments": c.raw_arguments})
                for c in self.tool_calls()
            ],
            "finish_reason": self.raw_finish_reason,
            "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
            "error": None
            if self.error is None
            else {
                "status": self.error.status,
                "type": self.error.type,
                "message": self.error.message,
            },
        }
        refusal = self.text(refusal=True)
        if refusal:
            out["refusal"] = refusal
        return out


class ModelInfo(_Model):
    id: str
    name: str | None = None
    provider_details: dict[str, Any] | None = None
