"""The agent loop: send → stream → tool calls → approval → run → feed results back → repeat.

    loop = AgentLoop(client, request, registry, emit=print)
    result = await loop.run()          # stop_reason, usage, error, the new messages

Every step is handed to ``emit`` as a JSON-ready dict the moment it happens (the events of
``docs/PROTOCOL.md``: ``step``, the adapter's stream events, ``message``, ``approval``, ``tool_start``,
``tool_progress``, ``tool_end``). The run ends when the model answers without tool calls
(``end_turn``), refuses (``refused``), at the step limit (``max_steps``), when the token budget is
spent (``token_budget``), on a vendor error (``error``) or on Stop (``stopped``).

Invariants:

- nothing received is lost: the assistant message of every step is emitted, even cut off by Stop,
  an error or a dropped stream (then with ``incomplete: true``);
- every emitted assistant message with tool calls is followed by a ``user`` message with one result
  per call, even when the calls were not run (stopped, limit reached, cut off): the transcript stays
  valid for the next request on any vendor;
- a tool that raises, times out, is unknown or denied gives an ``is_error`` result; the loop goes on; so does a
  call whose arguments are not a JSON object as written (``raw_arguments``: never completed by a guess) or lack
  a property the tool's inputSchema requires: it is not run (nor asked about) and the model is told why;
- a call that Stop cancelled or kept from running ends with a ``tool_end`` marked ``stopped: true`` (its
  result is an ``is_error`` one for the model, but the page shows it as stopped, not failed);
- approval (:mod:`pycore.agent.approval`): a call runs without asking only if the user allowed the tool
  or trusted its server. Once a run has fed an MCP server's tool results into the conversation, a call
  of *another* server's tool whose ``openWorldHint`` is not ``false`` asks even if allowed: the
  ``approval`` event then carries ``reason: {kind: "cross_server", from: [the sources read]}``, which the
  card shows (data read from one server could leave through another);
- calls of one step run concurrently; each waits for its own approval, so an answered approval
  does not wait for the others. At most ``MAX_CALLS_PER_STEP`` of them run; the rest get the ``is_error``
  result "not run: at most N tool calls per step", which the model sees;
- every call of a step has its own id: the parts manager re-keys a repeated id as the stream arrives
  (:func:`pycore._parts.unique_call_id`), and the loop checks again before the message is kept, so an
  approval or a result never lands on another call.

Stop is cancelling the task that runs :meth:`AgentLoop.run`: the stream is aborted, running tools
are cancelled (an MCP call sends ``notifications/cancelled``), what arrived is emitted, and ``run``
returns ``stopped`` instead of raising.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from pycore._json import ArgumentsError, loads_arguments
from pycore._parts import unique_call_id
from pycore.agent.approval import ApprovalPolicy, ask_user, crossing
from pycore.agent.pending import Pending, UnknownCallError
from pycore.agent.tools import AgentTool, ToolContext, ToolRegistry, ToolResult
from pycore.client import ChatClient
from pycore.contract import (
    MessageEvent,
    StepEvent,
    TaskHandle,
    ToolEndEvent,
    ToolProgressEvent,
    ToolStartEvent,
    ToolTaskEvent,
    to_wire,
)
from pycore.exceptions import APIConnectionError, APIStatusError, OrizuruError
from pycore.messages import ChatRequest, Completion, ErrorInfo, Message, ToolCallPart, ToolDisplay, ToolResultPart

Emit = Callable[[dict[str, Any]], None]
MAX_CALLS_PER_STEP = 16  # calls past this in one step are not run; each gets an is_error result


@dataclass
class Limits:
    max_steps: int = 10
    token_budget: int | None = None  # input + output tokens over all steps, as the vendor counts them
    tool_timeout: float = 60.0

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, not {self.max_steps}")
        if self.tool_timeout <= 0:
            raise ValueError(f"tool_timeout_s must be positive, not {self.tool_timeout}")


@dataclass
class RunResult:
    stop_reason: str
    input_tokens: int = 0
    output_tokens: int = 0
    error: ErrorInfo | None = None
    steps: int = 0
    messages: list[Message] = field(default_factory=list)  # what the run added to the conversation

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "stop_reason": self.stop_reason,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens},
            "steps": self.steps,
        }
        if self.error is not None:
            out["error"] = self.error.model_dump(mode="json", exclude_none=True)
        return out


class _Stopped(Exception):  # noqa: N818 - internal signal, not an error
    pass


class AgentLoop:
    def __init__(
        self,
        client: ChatClient,
        request: ChatRequest,
        registry: ToolRegistry | None = None,
        *,
        policy: ApprovalPolicy | None = None,
        limits: Limits | None = None,
        emit: Emit | None = None,
        approvals: Pending | None = None,
    ) -> None:
        self.client = client
        self.request = request
        self.registry = registry or ToolRegistry()
        self.policy = policy or ApprovalPolicy()
        self.limits = limits or Limits()
        self._emit = emit or (lambda event: None)
        self.approvals = approvals or Pending("approval")
        self.result = RunResult(stop_reason="end_turn")
        self._messages = list(request.messages)
        self._asking: dict[str, tuple[AgentTool, dict[str, Any] | None]] = {}  # call id -> tool, reason: asking
        self._read_from: set[str] = set()  # the MCP servers (sources) whose tool results entered this run

    # -- the loop ------------------------------------------------------------------------------

    async def run(self) -> RunResult:
        denied = [name for name, tool in self.registry.items() if self.policy.for_tool(tool) == "deny"]
        tools = self.registry.definitions(exclude=denied)
        try:
            for step in range(1, self.limits.max_steps + 1):
                self.result.steps = step
                completion = await self._model_step(step, tools)
                if completion is None:
                    return self.result  # the vendor refused the request: error set, nothing to keep
                calls = completion.tool_calls()
                if completion.error is not None:
                    self._not_run(step, calls, "the response was cut off by an error before the call was complete")
                    return self._stop("error", completion.error)
                if completion.finish_reason in ("refusal", "content_filter") and not calls:
                    return self._stop("refused")
                if not calls:
                    return self._stop("end_turn")
                if completion.finish_reason == "length":
                    self._not_run(step, calls, "the model hit its output limit before the call was complete; "
                                               "the arguments are cut off")
                    continue
                if self._over_budget():
                    self._not_run(step, calls, "not run: the token budget of this run is spent")
                    return self._stop("token_budget")
                if step == self.limits.max_steps:
                    self._not_run(step, calls, f"not run: the step limit ({self.limits.max_steps}) is reached")
                    return self._stop("max_steps")
                await self._run_calls(step, calls)
            return self._stop("max_steps")
        except _Stopped:
            _uncancel()  # Stop is a way to end, not an error: the run returns its result
            return self._stop("stopped")

    def _stop(self, reason: str, error: ErrorInfo | None = None) -> RunResult:
        self.result.stop_reason = reason
        self.result.error = error
        return self.result

    def _over_budget(self) -> bool:
        budget = self.limits.token_budget
        return budget is not None and self.result.input_tokens + self.result.output_tokens >= budget

    # -- one model request ---------------------------------------------------------------------

    async def _model_step(self, step: int, tools: list[Any]) -> Completion | None:
        self._emit(to_wire(StepEvent(step=step)))
        request = self.request.model_copy(update={"messages": list(self._messages), "tools": tools})
        stream = self.client.stream(request)
        events = stream.__aiter__()
        try:
            async for event in events:
                self._emit({**event.model_dump(mode="json", exclude_none=True), "step": step})
        except asyncio.CancelledError:
            await _close(events)
            if stream.completion is not None:
                self._keep(step, stream.completion, incomplete=True)
                self._not_run(step, stream.completion.tool_calls(), "not run: stopped by the user", stopped=True)
            raise _Stopped from None
        except APIStatusError as e:
            await _close(events)
            self._stop("error", ErrorInfo(code=e.error_code, status=e.status, type=e.type, message=e.vendor_message,
                                          vendor=e.vendor))
            self._keep_after_error(step, stream.completion)
            return None  # the run stops with that error
        except APIConnectionError as e:
            await _close(events)
            adapter = self.client.adapter
            host = urlsplit(adapter.base_url).netloc  # the only address its requests may go to
            self._stop("error", ErrorInfo(code=e.error_code, type="connection_error", message=e.message,
                                          vendor=e.vendor or adapter.vendor, host=host))
            self._keep_after_error(step, stream.completion)
            return None  # the run stops with that error
        except OrizuruError as e:
            await _close(events)
            self._stop("error", ErrorInfo(code=e.error_code, type=type(e).__name__, message=str(e),
                                          vendor=self.client.adapter.vendor))
            self._keep_after_error(step, stream.completion)
            return None  # the run stops with that error
        completion = stream.completion
        assert completion is not None  # set by the stream when it ends
        _unique_ids(completion)
        self._keep(step, completion, incomplete=completion.incomplete)
        return completion

    def _keep_after_error(self, step: int, completion: Completion | None) -> None:
        """What arrived before the error, kept as an incomplete message; its tool calls are not run."""
        if completion is not None and completion.message.parts:
            self._keep(step, completion, incomplete=True)
            self._not_run(step, completion.tool_calls(), "not run: the response ended with an error")

    def _keep(self, step: int, completion: Completion, *, incomplete: bool) -> None:
        usage = completion.usage
        if usage is not None:
            self.result.input_tokens += usage.input_tokens or 0
            self.result.output_tokens += usage.output_tokens or 0
        if completion.message.parts:  # an empty assistant message would be refused on the next request
            self._append(step, completion.message, incomplete=incomplete)

    def _append(self, step: int, message: Message, *, incomplete: bool = False) -> None:
        self._messages.append(message)
        self.result.messages.append(message)
        self._emit(to_wire(MessageEvent(step=step, message=message, incomplete=incomplete)))

    def _not_run(self, step: int, calls: list[ToolCallPart], why: str, *, stopped: bool = False) -> None:
        if not calls:
            return
        results = []
        for call in calls:
            results.append(self._end(step, call, ToolResult.text(why, is_error=True), 0.0, stopped=stopped))
        self._append(step, Message(role="user", parts=results))

    # -- tools ---------------------------------------------------------------------------------

    async def _run_calls(self, step: int, calls: list[ToolCallPart]) -> None:
        read_before = frozenset(self._read_from)  # the calls of one step were written before their results
        over = calls[MAX_CALLS_PER_STEP:]
        calls = calls[:MAX_CALLS_PER_STEP]
        tasks = [asyncio.ensure_future(self._call(step, call, read_before)) for call in calls]
        refused = []
        for call in over:
            result = ToolResult.text(f"not run: at most {MAX_CALLS_PER_STEP} tool calls per step", is_error=True)
            refused.append(self._end(step, call, result, 0.0))
        try:
            results = await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            parts = []
            for call, task in zip(calls, tasks, strict=True):
                if task.cancelled() or task.exception() is not None:
                    stopped = ToolResult.text("cancelled: stopped by the user", is_error=True)
                    parts.append(self._end(step, call, stopped, 0.0, stopped=True))
                else:
                    parts.append(task.result())
            self._append(step, Message(role="user", parts=parts + refused))
            raise _Stopped from None
        self._append(step, Message(role="user", parts=[*results, *refused]))

    async def _call(self, step: int, call: ToolCallPart, read_before: frozenset[str] = frozenset()) -> ToolResultPart:
        tool = self.registry.resolve(call.name)
        if tool is None:
            known = ", ".join(name for name, _ in self.registry.items()) or "none"
            result = ToolResult.text(f"unknown tool {call.name!r}; the tools are: {known}", is_error=True)
            return self._end(step, call, result, 0.0)
        problem = _arguments_problem(call, tool)
        if problem is not None:  # told to the model, which may call again; nothing to approve or run
            result = ToolResult.text(f"{call.name} was not run: {problem}", is_error=True)
            return self._end(step, call, result, 0.0, source=tool.source)
        policy = self.policy.for_tool(tool)
        reason = crossing(tool, read_before)
        if policy == "allow" and reason is not None:
            policy = "ask"
        if policy == "deny":
            result = ToolResult.text(f"{call.name} is denied by the user's policy; it was not run", is_error=True)
            return self._end(step, call, result, 0.0, source=tool.source)
        if policy == "ask" and not await self._approved(step, call, tool, reason):
            result = ToolResult.text(f"the user declined to run {call.name}", is_error=True)
            return self._end(step, call, result, 0.0, source=tool.source, denied=True)
        return await self._execute(step, call, tool)

    async def _approved(self, step: int, call: ToolCallPart, tool: AgentTool, reason: dict[str, Any] | None = None
                        ) -> bool:
        """The user's answer: ``allow`` or ``deny`` this call, or ``always`` (this call, and this tool of
        this source as it is defined now, for the rest of the run; other calls of it still waiting run,
        except those asked for a reason of their own, such as data from another server)."""
        self._asking[call.id] = (tool, reason)
        try:
            decision = await ask_user(self.approvals, self._emit, step=step, call_id=call.id, name=call.name,
                                      tool=tool, arguments=call.arguments, reason=reason)
        finally:
            self._asking.pop(call.id, None)
        if decision == "always":
            self.policy.remember(tool, "allow")
            for other_id, (other, other_reason) in list(self._asking.items()):
                if (other.source, other.name) == (tool.source, tool.name) and other_reason is None:
                    with contextlib.suppress(UnknownCallError):
                        self.approvals.resolve(other_id, "allow")
        return decision in ("allow", "always")

    async def _execute(self, step: int, call: ToolCallPart, tool: AgentTool) -> ToolResultPart:
        timeout = self.limits.tool_timeout
        self._emit(to_wire(ToolStartEvent(step=step, **self._describe(call, tool))))

        def progress(done: float, total: float | None = None, message: str | None = None, task: Any = None) -> None:
            status = task if task in ("working", "input_required") else None
            self._emit(to_wire(ToolProgressEvent(step=step, call_id=call.id, progress=done, total=total,
                                                 message=message, task=status)))

        def task(handle: TaskHandle) -> None:  # named as the model called it (the registry may have renamed it)
            self._emit(to_wire(ToolTaskEvent(step=step, handle=handle.model_copy(update={"name": call.name}))))

        context = ToolContext(call_id=call.id, timeout=timeout, on_progress=progress, on_task=task)
        started = time.monotonic()
        try:
            if tool.source.startswith("mcp:"):
                self._read_from.add(tool.source)  # whatever it returns enters the conversation
            result = await asyncio.wait_for(tool.handler(dict(call.arguments), context), timeout)
        except TimeoutError:
            result = ToolResult.text(f"{call.name} did not answer within {timeout:g} s and was cancelled",
                                     is_error=True)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - any failure of a tool is the model's to handle
            result = ToolResult.text(f"{call.name} failed: {describe_error(e)}", is_error=True)
        return self._end(step, call, result, (time.monotonic() - started) * 1000, source=tool.source)

    def _describe(self, call: ToolCallPart, tool: AgentTool) -> dict[str, Any]:
        return {"call_id": call.id, "name": call.name, "original_name": tool.name, "arguments": call.arguments,
                "source": tool.source}

    def _end(self, step: int, call: ToolCallPart, result: ToolResult, duration_ms: float, *, stopped: bool = False,
             source: str | None = None, denied: bool = False) -> ToolResultPart:
        """The call is over: ``tool_end`` emitted, and its result part for the model, carrying the same facts for
        the page's card (``display``: the server's items the model's content does not carry whole, the structured
        result, the duration, Stop or the user's Deny, the tool's source)."""
        duration = round(duration_ms, 1)
        self._emit(to_wire(ToolEndEvent(  # stopped: the user's Stop, not a failure of the tool (the card says so)
            step=step, call_id=call.id, name=call.name, is_error=result.is_error, content=result.content,
            duration_ms=duration, stopped=stopped, structured_content=result.structured,
            schema_problem=result.schema_problem)))
        return result_part(call.id, call.name, result, duration, stopped=stopped, source=source, denied=denied)


def result_part(call_id: str, name: str, result: ToolResult, duration_ms: float, *, stopped: bool = False,
                source: str | None = None, denied: bool = False) -> ToolResultPart:
    """A call's result as the model gets it, with the facts the page's card shows (``display``)."""
    display = ToolDisplay(content=result.display_content(), structured=result.structured,
                          schema_problem=result.schema_problem, duration_ms=duration_ms, stopped=stopped,
                          denied=denied, source=source)
    return ToolResultPart(call_id=call_id, name=name, content=result.model_content(), is_error=result.is_error,
                          display=display)


def _unique_ids(completion: Completion) -> None:
    """Re-key a tool call whose id an earlier call of the message has (the parts manager does it as the
    stream arrives; this holds for a completion made any other way)."""
    taken: set[str] = set()
    for part in completion.message.parts:
        if isinstance(part, ToolCallPart):
            part.id = unique_call_id(part.id, taken)
            taken.add(part.id)


def _arguments_problem(call: ToolCallPart, tool: AgentTool) -> str | None:
    """Why the call's arguments cannot be run: not a JSON object as written (cut off, broken), or a property the
    tool's inputSchema requires missing. Types and the rest are the tool's to check: it answers with its own error."""
    if call.raw_arguments is not None:
        try:
            loads_arguments(call.raw_arguments)
        except ArgumentsError as e:
            return str(e)
    required = tool.input_schema.get("required") if isinstance(tool.input_schema, dict) else None
    missing = [name for name in (required if isinstance(required, list) else [])
               if isinstance(name, str) and name not in call.arguments]
    if not missing:
        return None
    names = ", ".join(f"`{name}`" for name in missing)
    return f"missing required argument{'s' if len(missing) > 1 else ''} {names}"


def _uncancel() -> None:
    task = asyncio.current_task()
    if task is not None and hasattr(task, "uncancel"):
        task.uncancel()


def describe_error(error: BaseException) -> str:
    message = getattr(error, "message", None) or str(error)
    if isinstance(error, OrizuruError) and message:
        return str(message)  # ours are sentences (what happened, what to do): no class name in front
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


async def _close(events: Any) -> None:
    """Close the stream's generator so the completion is set (Stop must not wait on the network)."""
    try:
        await events.aclose()
    except (Exception, asyncio.CancelledError):  # noqa: BLE001 - closing after a failure: nothing to add
        return
