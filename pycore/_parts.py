"""The parts manager: the one owner of a response's state while it streams.

Adapters translate vendor events into calls such as ``text(key, delta)`` or
``tool_call_args(key, delta)`` and return the unified events these calls produce. ``key`` is
whatever identifies a part on the vendor's wire (a content-block index, an output-item id, a
tool-call index); the manager maps it to the index of the part in the message. The final
:class:`~pycore.messages.Completion` is rebuilt from the same parts, so what was streamed and what
is kept cannot drift apart. Non-streaming responses go through the same calls.

Cost stays flat as a response grows: text arrives as fragments kept in lists and joined once, in
:meth:`PartsManager.completion`. A manager made with ``runs=True`` (a stream parser's) joins
consecutive deltas of the same part into one event until :meth:`end_run` (called once per fed
chunk): what the UI consumes per chunk is the same text, in fewer events. An event is never
changed after :meth:`end_run`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Literal

from pycore._json import loads_arguments
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
    def __init__(self, vendor: str, *, runs: bool = False) -> None:
        self.vendor = vendor
        self.parts: list[Part] = []
        self._index: dict[tuple[str, Hashable], int] = {}  # (part kind, the vendor's key) -> part index
        self._texts: dict[int, list[str]] = {}  # text / reasoning part index -> its fragments
        self._args: dict[int, list[str]] = {}  # open tool calls: index -> argument fragments
        self.usage: Usage | None = None
        self.finish: tuple[FinishReason, str | None] | None = None
        self.error: ErrorInfo | None = None
        self.model: str | None = None
        self.response_id: str | None = None
        self.closed = False
        self._runs = runs
        # The open run: the delta event that later deltas of the same part join until end_run(),
        # that part's index, its fragment list and where the run started in it.
        self._run: Delta | None = None
        self._run_index = -1
        self._run_fragments: list[str] = []
        self._run_start = 0
        # The last delta()'s part: (key, kind, index, fragments, event maker), while its fragments are open.
        self._last_delta: _LastDelta = _NO_DELTA

    @property
    def stopped(self) -> bool:
        """An error arrived: like the vendors' SDKs, nothing after it counts."""
        return self.error is not None

    # ---------------------------------------------------------------- runs
    def end_run(self) -> None:
        """Close the open run (``runs=True``): the next delta is a new event, and the events given out
        so far stay as they are."""
        run = self._run
        if run is not None:
            if len(self._run_fragments) - self._run_start > 1:
                joined = "".join(self._run_fragments[self._run_start :])
                if isinstance(run, ToolCallArgsDelta):
                    run.delta = joined
                else:
                    run.text = joined
            self._run = None
            self._run_index = -1

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
        return self._append(index, self._texts[index], delta, _text_delta, refusal)

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
        return self._append(index, self._texts[index], delta, _reasoning_delta, False)

    def delta(self, kind: DeltaKind, key: Hashable, delta: str) -> list[Event]:
        """A plain delta by kind: text, reasoning, or the arguments of a tool call already started."""
        # Once per part and fed chunk from the stream parsers: the part of the last call, or one already
        # there, takes the short way.
        last = self._last_delta
        if last[0] is key and last[1] == kind and delta:
            return self._append(last[2], last[3], delta, last[4], False)
        index = self._index.get((_PART_KEYS[kind], key))
        if index is not None and delta:
            fragments = (self._args if kind == "args" else self._texts).get(index)
            if fragments is not None:
                self._last_delta = (key, kind, index, fragments, _DELTAS[kind])
                return self._append(index, fragments, delta, _DELTAS[kind], False)
        if kind == "text":
            return self.text(key, delta)
        if kind == "reasoning":
            return self.reasoning(key, delta)
        return self.tool_call_args(key, delta)

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
        part = ToolCallPart(id=id, name=name, id_synthesized=synthesized, vendor=self.vendor, provider_details=details)
        index = self._add(("tool", key), part)
        self._args[index] = []
        return self._event(ToolCallStart(index=index, id=id, name=name))

    def has_tool_call(self, key: Hashable) -> bool:
        return ("tool", key) in self._index

    def tool_call_args(self, key: Hashable, delta: str) -> list[Event]:
        index = self._index[("tool", key)]
        if not delta or index not in self._args:
            return []
        return self._append(index, self._args[index], delta, _args_delta, False)

    def tool_call_end(self, key: Hashable) -> list[Event]:
        index = self._index.get(("tool", key))
        if index is None or index not in self._args:
            return []
        part = self.parts[index]
        assert isinstance(part, ToolCallPart)
        part.arguments = loads_arguments("".join(self._args.pop(index)))
        self._last_delta = _NO_DELTA  # its fragments are closed
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

    def set_tool_call_details(self, key: Hashable, details: dict[str, Any]) -> None:
        part = self.parts[self._index[("tool", key)]]
        assert isinstance(part, ToolCallPart)
        part.provider_details = {**(part.provider_details or {}), **details}

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

    def set_error(self, status: int | None, type: str | None, message: str) -> list[Event]:
        self.error = ErrorInfo(status=status, type=type, message=message, vendor=self.vendor)
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
        self.end_run()
        return events

    def completion(self, *, incomplete: bool = False) -> Completion:
        self.end_run()
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
    def _append(
        self, index: int, fragments: list[str], delta: str, make: Callable[[int, str, bool], Delta], flag: bool
    ) -> list[Event]:
        """Keep ``delta`` as a fragment of part ``index``. It joins the open run of that part, or starts
        one with its own delta event (``make(index, delta, flag)``), which later fragments join until
        :meth:`end_run` (with ``runs=True``; otherwise every delta is its own event)."""
        fragments.append(delta)
        if index == self._run_index:
            return []
        event = make(index, delta, flag)
        if self._run is not None:
            self.end_run()
        if self._runs:
            self._run, self._run_index = event, index
            self._run_fragments, self._run_start = fragments, len(fragments) - 1
        return [event]

    def _event(self, event: Event) -> list[Event]:
        self.end_run()
        return [event]

    def _add(self, key: tuple[str, Hashable], part: Part) -> int:
        self._last_delta = _NO_DELTA  # a key may now name another part
        self.parts.append(part)
        self._index[key] = len(self.parts) - 1
        return len(self.parts) - 1

    def _key_of(self, index: int) -> Hashable:
        for (kind, key), value in self._index.items():
            if value == index and kind == "tool":
                return key
        raise KeyError(index)


# The delta events, built positionally: one is made per part per fed chunk, and in Pyodide a call
# with keyword arguments (the events' own constructors take only those) costs about twice as much.
# Each sets every field of its class (tests/pycore/test_parts.py compares them with the constructors).
_new = object.__new__


def _text_delta(index: int, text: str, refusal: bool) -> TextDelta:
    event = _new(TextDelta)
    event.type, event.index, event.text, event.refusal = "text_delta", index, text, refusal
    return event


def _reasoning_delta(index: int, text: str, _: bool) -> ReasoningDelta:
    event = _new(ReasoningDelta)
    event.type, event.index, event.text = "reasoning_delta", index, text
    return event


def _args_delta(index: int, delta: str, _: bool) -> ToolCallArgsDelta:
    event = _new(ToolCallArgsDelta)
    event.type, event.index, event.delta = "tool_call_args_delta", index, delta
    return event


# What PartsManager.delta() remembers of its last part: (key, kind, index, fragments, event maker).
_LastDelta = tuple[Hashable, str, int, list[str], Callable[[int, str, bool], Delta]]
# No part: a key that is no vendor's never matches, so the rest is never used.
_NO_DELTA: _LastDelta = (object(), "", -1, [], _text_delta)
# A delta kind -> the kind its parts are kept under in PartsManager._index.
_PART_KEYS: dict[DeltaKind, str] = {"text": "text", "reasoning": "reasoning", "args": "tool"}
_DELTAS: dict[DeltaKind, Callable[[int, str, bool], Delta]] = {
    "text": _text_delta,
    "reasoning": _reasoning_delta,
    "args": _args_delta,
}
