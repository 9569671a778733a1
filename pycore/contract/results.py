"""The results of the wire methods, as models: a method registers with ``@method(name, params=P, result=R)``
(:mod:`pycore.methods._registry`) and returns an ``R``; the wire sends it as JSON with ``None`` fields left
out (the same convention as events and stored messages: absent, never ``null``).

Where a part of the core already has a model for what a method returns (focus memory's results, a
message), the result is that model, so there is one declaration of it; the OAuth authorization request is
declared here and made by :mod:`pycore.mcp.oauth`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pycore.focus.results import ClassifierResult, Synthesis, UpdateResult
from pycore.messages import ErrorInfo, Message, Part, ToolResultPart

# declared beside the code that makes them:
__all__ = ["ClassifierResult", "Synthesis", "UpdateResult"]


class Result(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class Empty(Result):
    """Nothing: the call succeeded."""


class EchoResult(Result):
    """The text, sent back whole after its words were streamed."""

    text: str


class ModelEntry(Result):
    id: str
    name: str | None = None  # the vendor's display name, where it gives one


class ModelsResult(Result):
    """The models the vendor lists for this key."""

    models: list[ModelEntry]


class TranscriptResult(Result):
    """The words of the clip, as the vendor heard them."""

    text: str


class SpeechResult(Result):
    """The vendor's voice saying the text: the audio's bytes in base64, and its media type."""

    audio: str
    mime_type: str


# -- chat.run


class Usage(Result):
    input_tokens: int = 0
    output_tokens: int = 0


class RunResult(Result):
    """How the run ended. The transcript is the ``message`` events it streamed."""

    stop_reason: str  # "end_turn", "max_tokens", "tool_use", "stopped", "error", "max_steps", "token_budget"
    usage: Usage
    steps: int
    error: ErrorInfo | None = None  # what went wrong, when stop_reason is "error"


# -- MCP


class ServerInfo(Result):
    name: str
    version: str


class ToolInfo(Result):
    """A tool as the Tools panel shows it and the user's policy names it."""

    name: str  # as the model sees it (may carry a server prefix)
    original_name: str  # its own name on its server
    description: str
    input_schema: dict[str, Any] = Field(alias="inputSchema")
    policy: str  # the default: "allow" or "ask", from its annotations
    fingerprint: str  # changes when the tool's description or schema does
    new: bool  # not seen before, or changed since the user's choice
    annotations: dict[str, Any] | None = None
    ui: str | None = None  # the ui:// resource of its MCP App view, if it has one (pycore.mcp.apps)
    views_only: bool = False  # kept for its server's views (visibility ["app"]): never offered to the model
    output_schema: dict[str, Any] | None = Field(None, alias="outputSchema")  # its structured result's, if it says


class LogEntry(Result):
    """One of a server's log messages (``notifications/message``): when it came (seconds since the epoch), its
    level, the logger it names, and its data (any JSON; cut to its text when long)."""

    time: float
    level: str
    logger: str | None = None
    data: Any = None


class ServerDescription(Result):
    """A connected MCP server: what it offers, how it is reached, and its log (the last messages, newest last)."""

    id: str
    url: str
    status: str  # "connected", "unreachable" (a request found no server since) or "closed"
    problem: str | None = None  # why it is "unreachable": a sentence naming the host and what to do
    transport: str  # "streamable-http" or "sse"
    server: ServerInfo | None = None
    protocol_version: str | None = None
    tools: list[ToolInfo]
    resources: list[dict[str, Any]]  # {uri, name, title?, description?, mimeType?}
    prompts: list[dict[str, Any]]  # {name, title?, description?, arguments?}
    log: list[LogEntry] = Field(default_factory=list)


class TrafficRecord(Result):
    """Every JSON-RPC message of one server's session, in and out (:mod:`pycore.mcp.traffic`), secrets already
    out of it: what the Tools panel's inspector shows and exports, and ``python -m pycore mcp replay`` reads."""

    format: str
    url: str
    server: dict[str, Any]
    started: float  # seconds since the epoch; each message's ``t`` is ms after it
    dropped: int  # older messages no longer kept
    messages: list[dict[str, Any]]  # [{t, dir: "out" | "in", message}]


class ServerList(Result):
    """The connected MCP servers."""

    servers: list[ServerDescription]


class ResourceContents(Result):
    """A resource's contents as the server gave them; with ``as_parts``, also as message parts."""

    contents: list[dict[str, Any]]  # {uri, mimeType?, text} or {uri, mimeType?, blob}
    parts: list[Part] | None = None


class TaskOutcome(Result):
    """A task picked up again, ended: the call's result part, as the run would have made it (``display`` for its
    card); a task that failed, was cancelled or that its server no longer has is an error result saying so."""

    part: ToolResultPart


class AppToolResult(Result):
    """What a tool called by an MCP App view returned, in MCP form (``CallToolResult``: ``content``,
    ``structuredContent``, ``isError``), for the view."""

    result: dict[str, Any]


class PromptResult(Result):
    """A server's prompt, filled in: the messages to add to the conversation."""

    messages: list[Message]
    description: str | None = None


class Finding(Result):
    code: str  # stable, e.g. "cors_preflight", "no_acao"
    message: str
    fix: str


class Diagnosis(Result):
    """Why the page cannot reach an MCP server, and what to do."""

    mode: Literal["browser", "direct"]
    findings: list[Finding]
    relay_hint: str = ""


class AuthorizationRequest(Result):
    """What the page needs to send the user to the authorization server (made by pycore.mcp.oauth)."""

    authorization_url: str
    state: str
    issuer: str
    resource: str
    scope: str | None
    client_id: str
    registration: str


class OAuthStatus(Result):
    """Whether the worker holds tokens for a server (never the tokens themselves)."""

    authorized: bool
    resource: str | None = None
    issuer: str | None = None
    scope: str | None = None
    expires_at: float | None = None
    refreshable: bool | None = None


class OAuthFinished(Result):
    """Signed in: the grant (never its tokens: they stay in the worker, SECURITY.md T-A11)."""

    resource: str
    issuer: str
    scope: str | None = None
    expires_at: float | None = None


# -- focus


class Templates(Result):
    """Focus memory's default templates in a locale, and the problems of the ones the page sent."""

    locale: str
    locales: list[str]
    templates: dict[str, str]  # name -> the default source
    errors: dict[str, str]  # name -> what is wrong with the page's version


class FocusExport(Result):
    """A focus state, checked, as an export holds it."""

    state: dict[str, Any]


class RegistryHeader(Result):
    """A header a remote server asks for (its value is the user's to give, as for a URL added by hand)."""

    name: str
    required: bool


class RegistryRemote(Result):
    """Where a registry server is reachable: its URL with the variables that have defaults filled in; ``needs``
    names those that have none (such a URL is shown, not connected in one click)."""

    type: str  # "streamable-http" or "sse"
    url: str
    needs: list[str] = Field(default_factory=list)
    headers: list[RegistryHeader] = Field(default_factory=list)


class RegistryPackage(Result):
    """A package a registry server is published as; for a stdio one the relay can run, the exact ``mcpServers``
    entry to copy (required environment variables as ``<NAME>`` placeholders)."""

    registry_type: str
    identifier: str
    version: str
    entry: dict[str, Any] | None = None


class RegistryServer(Result):
    name: str
    title: str
    description: str
    version: str
    remotes: list[RegistryRemote] = Field(default_factory=list)
    packages: list[RegistryPackage] = Field(default_factory=list)


class RegistryResults(Result):
    """What a registry search found (the deleted entries left out)."""

    servers: list[RegistryServer]
