"""The params of the wire methods, as models: a method registers with ``@method(name, params=Model)``
(:mod:`pycore.methods._registry`) and receives the validated model instead of a dict.

:func:`validate` is the one place params are checked: a mistake becomes an
:class:`~pycore.exceptions.InvalidParamsError` (code ``invalid_params``) whose message names each field and
its problem ("chat.approve: decision: decision must be 'allow', 'deny' or 'always', not 'maybe'").
Fields the page may send beyond these are ignored, so a newer page still talks to an older core.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticUseDefault

from pycore.contract import TaskHandle
from pycore.exceptions import InvalidParamsError
from pycore.messages import Message, Reasoning

P = TypeVar("P", bound=BaseModel)


class Params(BaseModel):
    model_config = ConfigDict(extra="ignore")


def _headers(value: Any, problem: str) -> Any:
    """HTTP headers the page sends: an object of strings (absent: none)."""
    if value is None or value == "":
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(problem)
    return value


class NoParams(Params):
    """The method takes nothing."""


class EchoParams(Params):
    """The text to send back, word by word."""

    text: str = ""


class ApproveParams(Params):
    """The user's answer to an ``approval`` event, of the run that asked (``run_id``: its ``chat.run``'s, if any)."""

    run_id: str | None = None
    call_id: str
    decision: str

    @field_validator("decision")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in ("allow", "deny", "always"):
            raise ValueError(f"decision must be 'allow', 'deny' or 'always', not {value!r}")
        return value


class Root(Params):
    """A folder the user lets MCP servers know about: a ``file://`` URI and a name to show."""

    uri: str = Field(pattern=r"^file://")
    name: str | None = None


class RootsParams(Params):
    """The user's roots (none unless the user adds some); every connected server is told they changed."""

    roots: list[Root] = Field(default_factory=list)


class ElicitationAnswerParams(Params):
    """The user's answer to an ``elicitation`` event: ``accept`` (a form's ``content``), ``decline`` or ``cancel``."""

    id: str
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


class SamplingAnswerParams(Params):
    """The user's answer to a ``sampling`` event: ``approve`` a request (with the user's ``messages`` and
    ``system_prompt`` when edited), ``send`` its result to the server, or ``deny`` either."""

    id: str
    action: Literal["approve", "send", "deny"]
    messages: list[dict[str, str]] | None = None  # [{role: "user" | "assistant", text}]
    system_prompt: str | None = None


class PageToolResultParams(Params):
    """The page's answer to a ``page_tool`` event (MCP content items), of the run that asked (``run_id``, as for
    ``chat.approve``)."""

    run_id: str | None = None
    call_id: str
    content: list[dict[str, Any]] = Field(default_factory=list)
    is_error: bool = False
    structured_content: Any = None

    @field_validator("content", mode="before")
    @classmethod
    def _items(cls, value: Any) -> Any:
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(item, dict) and item.get("type") for item in value):
            raise ValueError("content must be a list of content items like {type: 'text', text: '...'}")
        return value


class ServerParams(Params):
    """The page's id of a connected MCP server."""

    id: str = ""


class TaskResultParams(Params):
    """A task kept from a run that a reload ended (its handle, from the run's ``tool_task`` event)."""

    handle: TaskHandle


class ConnectParams(ServerParams):
    """Connect an MCP server over HTTP: the page's id for it, its URL, headers to send (a credential) and the
    transport (``auto`` tries Streamable HTTP, then the older HTTP+SSE)."""

    url: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    transport: str = "auto"

    @field_validator("headers", mode="before")
    @classmethod
    def _strings(cls, value: Any) -> Any:
        return _headers(value, "headers must be an object of strings, e.g. {\"Authorization\": \"Bearer ...\"}")

    @field_validator("transport", mode="before")
    @classmethod
    def _transport(cls, value: Any) -> Any:
        value = value or "auto"
        if value not in ("auto", "streamable-http", "sse"):
            raise ValueError(f"transport must be auto, streamable-http or sse, not {value!r}")
        return value


class DoctorParams(Params):
    """Why a browser page cannot reach an MCP server: its URL, the page's origin, the headers the page would
    send; ``mode`` ``browser`` (default in Pyodide) or ``direct``; ``reachable`` the page's own no-cors probe."""

    url: str = ""
    origin: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    mode: str | None = None
    reachable: bool | None = None

    @field_validator("headers", mode="before")
    @classmethod
    def _strings(cls, value: Any) -> Any:
        return _headers(value, "headers must be an object of strings")


class ReadResourceParams(ServerParams):
    """A resource of a connected server; ``as_parts`` also returns it as message
    parts to attach (``name`` labels them)."""

    uri: str = ""
    as_parts: bool = False
    name: str | None = None


class AppToolCallParams(ServerParams):
    """A tool call an MCP App view of server ``id`` makes (``tools/call`` over its bridge): the tool's own
    ``name`` on that server, its ``arguments``; ``call_id`` names the ``approval`` event if the user must be asked,
    which ``chat.approve`` answers. ``policy`` and ``trusted`` are the user's choices, as for ``chat.run``."""

    name: str = ""
    arguments: dict[str, Any] = Field(default_factory=dict)
    call_id: str = ""
    policy: list[dict[str, Any]] = Field(default_factory=list)
    trusted: bool = False


class CodeToolCallParams(AppToolCallParams):
    """A tool call the code of a ``python`` call makes (code mode: ``orizuru.tools`` in the notebook, passed on by
    the page): server ``id``'s tool ``name``, its ``arguments``; approved as :class:`AppToolCallParams` is, and, as
    in the loop, asked although allowed when the code has read results of another server (``read_from``: their
    sources, ``mcp:<server id>``) and the tool may reach the open world."""

    read_from: list[str] = Field(default_factory=list)


class GetPromptParams(ServerParams):
    """A prompt of a connected server, with its arguments."""

    name: str = ""
    arguments: dict[str, Any] = Field(default_factory=dict)


class ProviderParams(Params):
    """The vendor to ask (``models.list``): ``{vendor, api_key?, base_url?}``, checked by the adapters'
    catalogue (:mod:`pycore.methods._provider`)."""

    provider: Any = None


NonEmpty = Annotated[str, Field(min_length=1)]


class TranscribeParams(ProviderParams):
    """A recorded clip to write down (``audio.transcribe``): its bytes in base64 and media type, the profile's chat
    model (Gemini's read audio), and optionally the vendor's transcription model and the language spoken."""

    audio: NonEmpty
    mime_type: str = Field(pattern=r"^audio/[\w.+-]+$")
    chat_model: str = ""
    model: str | None = None
    language: str | None = None


class SpeechParams(ProviderParams):
    """Text for the vendor's voice to say (``audio.speech``), with its voice, speed and model when chosen."""

    text: NonEmpty
    voice: str | None = None
    speed: float | None = Field(None, ge=0.25, le=4.0)
    model: str | None = None


class OAuthBeginParams(Params):
    """Start signing in to an MCP server: the popup opens the returned ``authorization_url``."""

    server_url: NonEmpty
    redirect_uri: NonEmpty
    www_authenticate: str | None = None
    scope: str | None = None
    client_id: str | None = None
    client_secret: str | None = None
    client_metadata_url: str | None = None


class OAuthFinishParams(Params):
    """The popup's URL after the redirect."""

    callback_url: NonEmpty


class OAuthServerParams(Params):
    """An MCP server's URL (``mcp.oauth_status``, ``mcp.oauth_forget``)."""

    server_url: NonEmpty


class ToolRef(Params):
    """One tool of one source (``mcp:<server id>``, ``python:<set id>``, ``page``)."""

    source: NonEmpty
    tool: NonEmpty


class PageTool(Params):
    """A tool the page runs: the model sees this definition; the page runs it when a ``page_tool`` event
    names it and answers with ``chat.page_tool_result``. ``source`` says where it comes from: ``page`` (its
    own JavaScript tools) or ``python:<set id>`` (a set of Python functions the user wrote, which the page
    runs in the code interpreter's sandbox, never in this worker)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    name: NonEmpty
    source: str = Field("page", pattern=r"^(page|python:.+)$")
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"}, alias="inputSchema")
    annotations: dict[str, Any] | None = None


class RunTools(Params):
    """The tools a run may offer: connected MCP servers by id, the tools the page runs (its own, and the user's
    Python tool sets) by definition; ``disabled`` ones are not offered; ``trusted`` servers' tools run without
    asking unless a hint asks more (:mod:`pycore.agent.approval`)."""

    mcp: list[str] = Field(default_factory=list)
    page: list[PageTool] = Field(default_factory=list)
    disabled: list[ToolRef] = Field(default_factory=list)
    trusted: list[str] = Field(default_factory=list)


class RunLimits(Params):
    """When the loop stops on its own: steps, total tokens (none: no budget), seconds per tool call; and the most
    tokens an MCP server's sampling request may have the model write, and the most characters of text it may send."""

    max_steps: int = Field(10, ge=1)
    token_budget: int | None = Field(None, ge=1)
    tool_timeout_s: float = Field(60, gt=0)
    sampling_max_tokens: int = Field(1024, ge=1)
    sampling_max_input_chars: int = Field(100_000, ge=1)  # the most text a sampling request may send the model


class ChatRunParams(Params):
    """One turn of the agent loop: the vendor to ask (``{vendor, api_key?, base_url?}``, checked by the
    adapters' catalogue), the model, the conversation so far (unified messages), and what the run may use.
    ``policy`` is the user's per-tool choices ``[{source, tool, policy, fingerprint?}]``. ``run_id`` names the run
    among those going on at once (the page's choice): its approvals and page tools are answered with it."""

    run_id: str | None = None
    provider: Any = None
    model: NonEmpty
    messages: Annotated[list[Message], Field(min_length=1)]
    system: str | None = None
    temperature: float | None = None
    max_tokens: int | None = Field(None, ge=1)
    reasoning: Reasoning | None = None
    vendor_options: dict[str, Any] = Field(default_factory=dict)
    tools: RunTools = Field(default_factory=RunTools)
    policy: list[dict[str, Any]] = Field(default_factory=list)
    limits: RunLimits = Field(default_factory=RunLimits)

    @field_validator("system", "max_tokens", "reasoning", "tools", "limits", "vendor_options", "policy",
                     mode="before")
    @classmethod
    def _unset(cls, value: Any) -> Any:
        if value is None or value == "" or value == 0:
            raise PydanticUseDefault  # the page sends null, "" or 0 for what the user left empty
        return value


# ------------------------------------------------------------------ focus memory (pycore.methods.focus)


def _text_of(value: Any) -> Any:
    """A text, or an object carrying one as ``text`` (the page sends messages either way)."""
    if isinstance(value, dict):
        value = value.get("text")
    if not isinstance(value, str):
        raise ValueError(f"must be a string (or {{text}}), not {type(value).__name__}")
    return value


class ClassifierSpec(Params):
    """The model that labels each message for focus memory, usually a small cheap one on any vendor."""

    provider: Any = None
    model: NonEmpty
    strategy: Literal["auto", "tool", "json"] = "auto"

    @field_validator("strategy", mode="before")
    @classmethod
    def _strategy(cls, value: Any) -> Any:
        value = value or "auto"
        if value not in ("auto", "tool", "json"):
            raise ValueError(f"strategy must be auto, tool or json, not {value!r}")
        return value


class FocusParams(Params):
    """The focus state the page keeps with the transcript (``FocusState.to_export``; none: an empty state).
    Checked by :meth:`pycore.focus.FocusState.from_export`, whose error names the bad field."""

    state: dict[str, Any] | None = None


class SynthesizeParams(FocusParams):
    """Before each reply: the message, the system prompt to build on, the token budget, the locale and the
    user's edited templates (``{name: source}``)."""

    text: str
    system: str | None = None
    budget: int = 2000
    locale: str | None = None
    templates: dict[str, str] = Field(default_factory=dict)

    @field_validator("text", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return _text_of(value)

    @field_validator("budget", mode="before")
    @classmethod
    def _budget(cls, value: Any) -> Any:
        if value is None or value == 0:
            return 2000
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"budget must be a positive number of tokens, not {value!r}")
        return value


class ClassifyParams(FocusParams):
    """The classifier alone, on one message."""

    classifier: ClassifierSpec
    text: str

    @field_validator("text", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return _text_of(value)


class FocusMessage(Params):
    """The user's message (its store id, its text)."""

    id: str | None = None
    text: str


class UpdateParams(FocusParams):
    """After the reply, for the next turn: classifies the message unless ``classified`` (a ``focus.classify``
    result) is given."""

    message: FocusMessage
    reply: str = ""
    classifier: ClassifierSpec | None = None
    classified: dict[str, Any] | None = None

    @field_validator("reply", mode="before")
    @classmethod
    def _reply(cls, value: Any) -> Any:
        return "" if not value else _text_of(value)


class TemplatesParams(Params):
    """The editable templates in a locale, with the user's edits checked."""

    locale: str | None = None
    templates: dict[str, str] = Field(default_factory=dict)


def _field(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "params"


def _problem(error: Any) -> str:
    message = str(error["msg"])
    return message.removeprefix("Value error, ")  # our own validators' sentences, as they were written


def validate(method: str, model: type[P], params: dict[str, Any]) -> P:
    try:
        return model.model_validate(params)
    except ValidationError as e:
        errors = [{"field": _field(err["loc"]), "problem": _problem(err)} for err in e.errors()]
        said = "; ".join(f"{err['field']}: {err['problem']}" for err in errors)
        raise InvalidParamsError(f"{method}: {said}", errors=errors) from None


class RegistrySearchParams(Params):
    """Search an MCP registry (the official one unless ``url`` names another) for servers whose names hold
    ``query``: :mod:`pycore.mcp.registry`."""

    url: str = "https://registry.modelcontextprotocol.io"
    query: str = Field(min_length=1, max_length=200)
