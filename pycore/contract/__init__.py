"""The contract between the page and the core: what crosses the worker boundary, declared once.

The page (``web/``) and the core speak JSON through ``web/worker.js`` and :mod:`pycore.wire`. This
module says what that JSON is:

- **events**: every event a method streams. ``chat.run`` streams the model's own events (the stream
  events of :mod:`pycore.messages`, each with the ``step`` it belongs to) and the loop's events below;
- **parts**: the parts a message is made of (:data:`pycore.messages.Part`), as the page stores them;
- **errors**: a failed call is ``{code, message, details}`` (:class:`WireErrorInfo`), and an error inside
  a run (a vendor's 401, an unreachable host) is :class:`pycore.messages.ErrorInfo`, which carries the same
  ``code``. ``code`` is one of :data:`ERROR_CODES`; the page branches on it, never on the message text.
  Each exception class says its code (``error_code``); :func:`error_code` is the one mapping.

``python -m pycore contract`` writes the JSON Schema of all of it (the build puts it in
``dist/contract.schema.json``) and ``docs/PROTOCOL.md``; tests fail when the page's JavaScript names an
event type, part type or error code this module does not, or the other way round.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from pycore.messages import Event, Message, Part

ErrorCode = Literal[
    # the call itself
    "invalid_params",  # the params are not what the method takes: the message names the field
    "unknown_method",  # no such method in this core (a page newer than its core)
    "unknown_call",  # an answer (approval, page tool result) for a call nothing waits for
    "not_ready",  # the core has not finished booting (said by the worker)
    "boot_failed",  # Python or the core could not start: ``stage`` says where (said by the worker)
    "cancelled",  # the page cancelled the call (Stop) before it had a result (said by the worker)
    "internal",  # a bug: anything else
    # a vendor
    "vendor_error",  # the vendor answered with an error of no more specific kind
    "vendor_auth",  # 401: the key is wrong or missing
    "vendor_permission",  # 403
    "vendor_not_found",  # 404: usually the model name or the Base URL
    "vendor_bad_request",  # 400 / 422
    "vendor_too_large",  # 413
    "vendor_rate_limit",  # 429
    "vendor_overloaded",  # 529, or overloaded_error in the stream
    "vendor_server",  # >= 500
    "vendor_unreachable",  # no answer at all: offline, DNS, CORS, a wrong Base URL
    "vendor_timeout",
    "vendor_connection_lost",  # the vendor answered, then the connection dropped mid-reply
    "vendor_stream",  # a body that does not follow the vendor's format
    "unsupported_content",  # the conversation holds content this vendor cannot take
    # an MCP server
    "mcp_error",
    "mcp_unreachable",
    "mcp_connection_lost",
    "mcp_timeout",
    "mcp_http",
    "mcp_redirect",
    "mcp_auth_required",  # 401: sign in (OAuth) or give a header
    "mcp_insufficient_scope",  # 403 insufficient_scope: sign in again for more
    "mcp_cors",
    "mcp_protocol",
    "mcp_unsupported_version",
    "mcp_too_large",
    "mcp_server_error",  # the server answered with a JSON-RPC error
    "mcp_session_expired",
    "oauth_failed",
    "tool_refused",  # an MCP App view's tool call that the user, or the tool's visibility, did not allow
]
ERROR_CODES: tuple[str, ...] = get_args(ErrorCode)


class WireErrorInfo(BaseModel):
    """A call that failed: what the worker rejects the page's promise with."""

    code: ErrorCode
    message: str  # a sentence for the user: no class name, no traceback, no secret
    details: dict[str, Any] = Field(default_factory=dict)


def error_code(error: BaseException) -> ErrorCode:
    """The stable code of an exception: its class's ``error_code``; a ValueError or TypeError is the
    caller's params; anything else is a bug (``internal``)."""
    code = getattr(type(error), "error_code", None)
    if code in ERROR_CODES:
        return code  # type: ignore[no-any-return]  # checked: one of ERROR_CODES
    if isinstance(error, (ValueError, TypeError)):
        return "invalid_params"
    return "internal"


def error_details(error: BaseException) -> dict[str, Any]:
    """What the page may act on besides the code: the HTTP status and URL of an MCP or vendor error; the
    fields and their problems of ``invalid_params`` (:class:`pycore.exceptions.InvalidParamsError`)."""
    details: dict[str, Any] = {}
    errors = getattr(error, "details", {}).get("errors") if isinstance(getattr(error, "details", None), dict) else None
    if isinstance(errors, list):
        details["errors"] = errors
    for name in ("status", "url", "vendor"):
        value = getattr(error, name, None)
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            details[name] = value
    return details


# ---------------------------------------------------------------------------------------- events


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class StepEvent(_Event):
    """A model request begins: the events that follow, up to the next ``step``, belong to it."""

    type: Literal["step"] = "step"
    step: int


class MessageEvent(_Event):
    """A message of the run is final: the assistant's reply of a step, or the user turn of tool results.
    These messages, in order, are the run's transcript (``RunResult.messages``)."""

    type: Literal["message"] = "message"
    step: int
    message: Message
    incomplete: bool = False  # stopped, cut off or ended by an error: what arrived, kept


class _ToolEvent(_Event):
    step: int
    call_id: str
    name: str  # the name the model used (may carry a server prefix)
    original_name: str  # the tool's own name on its server
    arguments: dict[str, Any]
    source: str  # "mcp:url:<url>", "mcp:relay:<name>", "python:<set>", "page"


class CrossServerReason(_Event):
    """Why an allowed tool asks: the reply has read data from other servers' tools."""

    kind: Literal["cross_server"] = "cross_server"
    from_: list[str] = Field(alias="from")


class ApprovalEvent(_ToolEvent):
    """The loop waits for the user: answer with ``chat.approve`` (allow, deny, always)."""

    type: Literal["approval"] = "approval"
    fingerprint: str
    reason: CrossServerReason | None = None


class ToolStartEvent(_ToolEvent):
    """A tool call starts running."""

    type: Literal["tool_start"] = "tool_start"


class ToolProgressEvent(_Event):
    """A running tool reported progress; or, for a call its MCP server runs as a task (the tasks extension), the
    task's status (``task``) and its ``statusMessage`` (``message``), with no count."""

    type: Literal["tool_progress"] = "tool_progress"
    step: int
    call_id: str
    progress: float
    total: float | None = None
    message: str | None = None
    task: Literal["working", "input_required"] | None = None


class TaskHandle(_Event):
    """A tool call its MCP server runs as a task (the tasks extension): what the page keeps with the message so that
    a reload, a closed tab or a crash picks the task up again (``mcp.task_result``). ``name`` is the call's (the name
    the model used), ``tool`` the tool's own name on its server; ``created`` when the task was made (ms since the
    epoch, this machine's clock) and ``ttl_ms`` how long the server said it keeps it (absent: it did not say)."""

    server_id: str
    task_id: str
    call_id: str
    name: str
    tool: str
    created: float
    ttl_ms: int | None = None


class ToolTaskEvent(_Event):
    """A running MCP tool call became a task on its server: its handle, for the page to keep with the message."""

    type: Literal["tool_task"] = "tool_task"
    step: int
    handle: TaskHandle


class ToolEndEvent(_Event):
    """A tool call ended: its result (MCP content items), as the model will see it."""

    type: Literal["tool_end"] = "tool_end"
    step: int
    call_id: str
    name: str
    is_error: bool
    content: list[dict[str, Any]]
    duration_ms: float
    structured_content: Any = None
    schema_problem: str | None = None  # how structured_content breaks the tool's outputSchema: flagged, not hidden
    stopped: bool = False  # the user's Stop cut the call short or kept it from running: no failure of the tool


class PageToolEvent(_Event):
    """A tool of the page runs: the page runs its handler and answers with ``chat.page_tool_result``."""

    type: Literal["page_tool"] = "page_tool"
    call_id: str
    source: str
    name: str
    arguments: dict[str, Any]


class ElicitationEvent(_Event):
    """An MCP server asks the user something while the run uses it (:mod:`pycore.mcp.elicitation`): the page
    shows the form (``requested_schema``) or the URL and its host, and answers with ``mcp.elicitation_result``.
    ``id`` is the question's, not a tool call's; the server is the page's id for it."""

    type: Literal["elicitation"] = "elicitation"
    id: str
    server_id: str
    mode: Literal["form", "url"]
    message: str
    requested_schema: dict[str, Any] | None = None
    url: str | None = None
    url_host: str | None = None


class SamplingEvent(_Event):
    """An MCP server asks the conversation's model for a completion (:mod:`pycore.mcp.sampling`), in two stages
    the user answers with ``mcp.sampling_answer``: ``request`` (what would be sent: ``approve``, edited or not, or
    ``deny``) and then ``result`` (what the model answered: ``send`` it to the server, or ``deny``). ``refused``
    answers nothing: the request was refused without asking (``refused``: ``too_large``, more characters of text
    than ``limit``; ``too_many``, ``limit`` requests of that server already open) and the page says so."""

    type: Literal["sampling"] = "sampling"
    id: str
    server_id: str
    stage: Literal["request", "result", "refused"]
    model: str  # the conversation's model, which answers
    max_tokens: int  # the smaller of the server's and the user's budget
    # [{role, text, images: [{mime_type, bytes, data (base64)}]}], for "request": all that would be sent
    messages: list[dict[str, Any]] = Field(default_factory=list)
    input_chars: int | None = None  # the characters of text the request sends (messages and system prompt)
    refused: Literal["too_large", "too_many"] | None = None
    limit: int | None = None  # for "refused": the limit it went past
    system_prompt: str | None = None
    model_hints: list[str] = Field(default_factory=list)  # the models the server would prefer (a hint only)
    text: str | None = None  # the model's answer, for "result"
    stop_reason: str | None = None


LoopEvent = Annotated[
    StepEvent | MessageEvent | ApprovalEvent | ToolStartEvent | ToolProgressEvent | ToolTaskEvent | ToolEndEvent
    | PageToolEvent | ElicitationEvent | SamplingEvent,
    Field(discriminator="type"),
]
LOOP_EVENTS: tuple[type[_Event], ...] = (StepEvent, MessageEvent, ApprovalEvent, ToolStartEvent, ToolProgressEvent,
                                         ToolTaskEvent, ToolEndEvent, PageToolEvent, ElicitationEvent, SamplingEvent)


def to_wire(event: _Event) -> dict[str, Any]:
    """An event as the page gets it: JSON, aliases (``from``), no ``None``, and none of its own fields that are at
    their default but ``type`` (a flag that is off, a list that is empty is not sent: the page reads absent as the
    default). What it carries (a message, its parts) is sent whole."""
    data = event.model_dump(mode="json", by_alias=True, exclude_none=True)
    for name, field in type(event).model_fields.items():
        key = field.alias or name
        if name != "type" and key in data and not field.is_required() \
                and data[key] == field.get_default(call_default_factory=True):
            del data[key]
    return data


def _literal_default(cls: Any) -> str:
    return str(cls.__dataclass_fields__["type"].default if hasattr(cls, "__dataclass_fields__")
               else cls.model_fields["type"].default)


def stream_event_types() -> list[str]:
    """The model's stream events (:data:`pycore.messages.Event`)."""
    return [_literal_default(m) for m in get_args(get_args(Event)[0])]


def loop_event_types() -> list[str]:
    return [str(cls.model_fields["type"].default) for cls in LOOP_EVENTS]


def event_types() -> list[str]:
    """Every event ``type`` a method streams."""
    return stream_event_types() + loop_event_types()


def part_types() -> list[str]:
    return [str(m.model_fields["type"].default) for m in get_args(get_args(Part)[0])]
