"""The parts manager: the one owner of a response's state while it streams.

Adapters translate vendor events into calls such as ``text(key, delta)`` or
``tool_call_args(key, delta)`` and return the unified events these calls produce. ``key`` is
whatever identifies a part on the vendor's wire (a content-block index, an output-item id, a
tool-call index); the manager maps it to the index of the part in the message. The final
:class:`~pycore.messages.Completion` is rebuilt from the same parts, so what was streamed and what
is kept cannot drift apart. Non-streaming responses go through the same calls.

Cost stays flat as a response grows: text arrives as fragments kept in lists and joined once, in
:meth:`PartsManager.completion`. A manager made with ``merge_deltas=True`` (a stream parser's) holds a delta
back while more of the same part follows, and gives it out as one event, its fragments joined, when
anything else happens or at :meth:`flush` (once per fed chunk): the UI gets the same text in fewer
events. Events are new objects, never changed once given out.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Literal, assert_never

from pycore._json import ArgumentsError, loads_arguments
from pycore.exceptions import status_error_class
from pycore.messages import (
    Completion,
    ErrorEvent,
    ErrorInfo,
    Event,
    FinishEvent,
    FinishReason,
    Message,
    Part,
    ReasoningDelta,
    ReasoningPart,
    TextDelta,
    TextPart,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    Usage,
    UsageEvent,
)

Delta = TextDelta | ReasoningDelta | ToolCallArgsDelta
DeltaKind = Literal["text", "reasoning", "args"]


class PartsManager:
    def __init__(self, vendor: str, *, merge_deltas: bool = False) -> None:
        self.vendor = vendor
        self.parts: list[Part] = []
        self._index: dict[tuple[str, Hashable], int] = {}  # (part kind, the vendor's key) -> part index
        self._texts: dict[int, list[str]] = {}  # text / reasoning part index -> its fragments
        self._args: dict[int, list[str]] = {}  # open tool calls: index -> argument fragments
        # streamed_tool_call: the vendor's key -> (the key the current call is filed under, the id it started with)
        self._streamed: dict[Hashable, tuple[Hashable, str | None]] = {}
        self.usage: Usage | None = None
        self.finish: tuple[FinishReason, str | None] | None = None
        self.error: ErrorInfo | None = None
        self.model: str | None = None
        self.response_id: str | None = None
        self.closed = False
        self._merge = merge_deltas
        # merge_deltas=True: the delta held back, as (part index, its fragments, where the delta starts there,
        # kind, refusal); given out by flush().
        self._held: tuple[int, list[str], int, DeltaKind, bool] | None = None

    def flush(self) -> list[Event]:
        """The delta held back (``merge_deltas=True``), as one event: the fragments of its part since it started."""
        held = self._held
        if held is None:
            return []
        self._held = None
        index, fragments, start, kind, refusal = held
        text = fragments[start] if start == len(fragments) - 1 else "".join(fragments[start:])
        return [_delta_event(kind, index, text, refusal)]

    # ---------------------------------------------------------------- text and reasoning
    def text(
        self, key: Hashable, delta: str, *, refusal: bool = False, details: dict[str, Any] | None = None
    ) -> list[Event]:
        index = self._index.get(("text", key))
        if index is None:
            index = self._add(("text", key), TextPart(text="", refusal=refusal, vendor=self.vendor))
            self._texts[index] = []
        if details:
            part = self.parts[index]
            assert isinstance(part, TextPart)
            part.provider_details = {**(part.provider_details or {}), **details}
        if not delta:
            return []
        return self._append(index, self._texts[index], delta, "text", refusal)

    def reasoning(
        self,
        key: Hashable,
        delta: str = "",
        *,
        signature: str | None = None,
        encrypted: str | None = None,
        redacted: bool = False,
        details: dict[str, Any] | None = None,
    ) -> list[Event]:
        index = self._index.get(("reasoning", key))
        if index is None:
            index = self._add(("reasoning", key), ReasoningPart(vendor=self.vendor, redacted=redacted))
            self._texts[index] = []
        if signature or encrypted or details:
            part = self.parts[index]
            assert isinstance(part, ReasoningPart)
            if signature:
                part.signature = (part.signature or "") + signature
            if encrypted:
                part.encrypted = encrypted
            if details:
                part.provider_details = {**(part.provider_details or {}), **details}
        if not delta:
            return []
        return self._append(index, self._texts[index], delta, "reasoning")

    # ---------------------------------------------------------------- tool calls
    def tool_call_start(
        self,
        key: Hashable,
        id: str,
        name: str,
        *,
        synthesized: bool = False,
        details: dict[str, Any] | None = None,
    ) -> list[Event]:
        # A second start under a key whose call is still open (a vendor starting one content block twice)
        # ends the earlier call there: later pieces under that key are the new call's.
        events = self.tool_call_end(key)
        id = unique_call_id(id, {p.id for p in self.parts if isinstance(p, ToolCallPart)})
        part = ToolCallPart(id=id, name=name, id_synthesized=synthesized, vendor=self.vendor, provider_details=details)
        index = self._add(("tool", key), part)
        self._args[index] = []
        return events + self._event(ToolCallStart(index=index, id=id, name=name))

    def streamed_tool_call(self, key: Hashable, id: str | None, name: str | None, arguments: str) -> list[Event]:
        """One streamed piece of a call the vendor keys by a position (OpenAI Chat's ``index``): the first
        piece starts the call, later pieces add to its arguments. A piece that names a call (a name) with an
        id other than the one the call under that key started with is a new call: a vendor reusing an index
        must not merge two calls into one (SECURITY.md T-P5); the earlier call ends there."""
        current = self._streamed.get(key)
        events: list[Event] = []
        if current is not None and name and id and id != current[1]:
            events += self.tool_call_end(current[0])
            current = None
        if current is None:
            current = ((key, len(self.parts)), id)
            self._streamed[key] = current
            events += self.tool_call_start(current[0], id or f"call_{key}", name or "")
        return events + self.tool_call_args(current[0], arguments)

    def has_tool_call(self, key: Hashable) -> bool:
        return ("tool", key) in self._index

    def tool_call_args(self, key: Hashable, delta: str) -> list[Event]:
        index = self._index[("tool", key)]
        if not delta or index not in self._args:
            return []
        return self._append(index, self._args[index], delta, "args")

    def tool_call_end(self, key: Hashable) -> list[Event]:
        index = self._index.get(("tool", key))
        if index is None or index not in self._args:
            return []
        part = self.parts[index]
        assert isinstance(part, ToolCallPart)
        text = "".join(self._args.pop(index))
        try:
            part.arguments = loads_arguments(text)
        except ArgumentsError:
            part.arguments, part.raw_arguments = {}, text  # kept as written; the loop does not run the call
        return self._event(ToolCallEnd(index=index, id=part.id, name=part.name, arguments=part.arguments))

    def tool_call(
        self,
        key: Hashable,
        id: str,
        name: str,
        arguments: str,
        *,
        synthesized: bool = False,
        details: dict[str, Any] | None = None,
    ) -> list[Event]:
        """A call that arrives whole (Gemini, Ollama, non-streaming bodies)."""
        events = self.tool_call_start(key, id, name, synthesized=synthesized, details=details)
        events += self.tool_call_args(key, arguments)
        return events + self.tool_call_end(key)

    # ---------------------------------------------------------------- end of response
    def set_usage(
        self, input_tokens: int | None, output_tokens: int | None, raw: Any = None, *, merge: bool = False
    ) -> list[Event]:
        """Record the usage so far; an event only when it changed (Gemini repeats it in every chunk)."""
        usage = self.usage
        if merge and usage is not None:
            input_tokens = usage.input_tokens if input_tokens is None else input_tokens
            output_tokens = usage.output_tokens if output_tokens is None else output_tokens
        details = raw if isinstance(raw, dict) else None
        if (
            usage is not None
            and usage.input_tokens == input_tokens
            and usage.output_tokens == output_tokens
            and usage.details == details
        ):
            return []
        self.usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, details=details)
        return self._event(UsageEvent(usage=self.usage))

    def set_finish(self, reason: FinishReason, raw: str | None) -> None:
        self.finish = (reason, raw)

    def set_error(self, status: int | None, type: str | None, message: str, *, code: str | None = None
                  ) -> list[Event]:
        """The response ended with an error (``code``: :mod:`pycore.contract`; by default the code of the
        error class for ``status`` and ``type``)."""
        code = code or status_error_class(status if status is not None else 200, type).error_code
        self.error = ErrorInfo(code=code, status=status, type=type, message=message, vendor=self.vendor)
        return self._event(ErrorEvent(error=self.error))

    def close(self) -> list[Event]:
        """End of the body: close open tool calls, then report the finish reason once."""
        if self.closed:
            return []
        self.closed = True
        events: list[Event] = []
        for index in list(self._args):
            events += self.tool_call_end(self._key_of(index))
        if self.finish is not None and self.error is None:
            events += self._event(FinishEvent(reason=self.finish[0], raw=self.finish[1]))
        return events + self.flush()

    def completion(self, *, incomplete: bool = False) -> Completion:
        finish = self.finish if self.error is None else None
        parts: list[Part] = []
        for index, part in enumerate(self.parts):
            fragments = self._texts.get(index)
            parts.append(part.model_copy(update={"text": "".join(fragments)}) if fragments else part.model_copy())
        return Completion(
            vendor=self.vendor,
            message=Message(role="assistant", parts=parts),
            finish_reason=finish[0] if finish else None,
            raw_finish_reason=finish[1] if finish else None,
            usage=self.usage,
            error=self.error,
            incomplete=incomplete or self.error is not None,
            model=self.model,
            response_id=self.response_id,
        )

    # ---------------------------------------------------------------- internals
    def _append(self, index: int, fragments: list[str], delta: str, kind: DeltaKind, refusal: bool = False
                ) -> list[Event]:
        """Keep ``delta`` as a fragment of part ``index``: its own event, or (``merge_deltas=True``) held back
        and joined by the deltas of the same part that follow it (:meth:`flush`)."""
        fragments.append(delta)
        if not self._merge:
            return [_delta_event(kind, index, delta, refusal)]
        held = self._held
        if held is not None and held[0] == index:
            return []
        events = self.flush() if held is not None else []
        self._held = (index, fragments, len(fragments) - 1, kind, refusal)
        return events

    def _event(self, event: Event) -> list[Event]:
        """A new event; a delta held back comes before it."""
        if self._held is None:
            return [event]
        events = self.flush()
        events.append(event)
        return events

    def _add(self, key: tuple[str, Hashable], part: Part) -> int:
        self.parts.append(part)
        self._index[key] = len(self.parts) - 1
        return len(self.parts) - 1

    def _key_of(self, index: int) -> Hashable:
        for (kind, key), value in self._index.items():
            if value == index and kind == "tool":
                return key
        raise KeyError(index)


def unique_call_id(id: str, taken: set[str]) -> str:
    """``id``, or when an earlier call of the response has it already (a vendor repeating an id), ``id_2``,
    ``id_3``, ...: the first free one. Approvals, results and the page's cards are keyed by the call id,
    so two calls must never share one; the new id is what the next request sends back, for call and result
    alike, so the transcript stays valid for every vendor."""
    if id not in taken:
        return id
    n = 2
    while f"{id}_{n}" in taken:
        n += 1
    return f"{id}_{n}"


def _delta_event(kind: DeltaKind, index: int, text: str, refusal: bool) -> Delta:
    if kind == "text":
        return TextDelta(index=index, text=text, refusal=refusal)
    if kind == "reasoning":
        return ReasoningDelta(index=index, text=text)
    if kind == "args":
        return ToolCallArgsDelta(index=index, delta=text)
    assert_never(kind)
