"""What MCP servers ask of the user: ``mcp.elicitation_result``, ``mcp.sampling_answer``, ``mcp.set_roots``.

A server's question (elicitation: :mod:`pycore.mcp.elicitation`) is put to the user as an ``elicitation`` event of
the newest running ``chat.run`` (the conversation whose tool the server is serving); ``mcp.elicitation_result``
answers it, checked against the form first. A sampling request (:mod:`pycore.mcp.sampling`) is shown the same
way (``sampling`` events), runs on that run's model once the user approves it, and goes back once the user has
seen the answer (``mcp.sampling_answer``). With no run going there is nobody to ask: a question is cancelled, a
sampling request denied. Roots (``roots/list``) are the user's, none unless they add some (``mcp.set_roots``).
:func:`asker` and :func:`sampler` are what ``mcp.connect`` gives each session.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from pycore.contract.params import ElicitationAnswerParams, RootsParams, SamplingAnswerParams
from pycore.contract.results import Empty
from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.methods._state import ActiveRun, WorkerState


def _event(kind: str, **fields: Any) -> dict[str, Any]:
    """An ``elicitation`` or ``sampling`` event, made as the contract's model (ElicitationEvent, SamplingEvent)
    and sent as the page gets every event (:func:`pycore.contract.to_wire`)."""
    from pycore.contract import ElicitationEvent, SamplingEvent, to_wire

    model = ElicitationEvent if kind == "elicitation" else SamplingEvent
    return to_wire(model(**{name: value for name, value in fields.items() if value is not None}))


def asker(server_id: str, worker: WorkerState) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
    """How the server's questions reach the user: as an ``elicitation`` event of the newest running chat.run
    (a question while no run is going, when nobody could answer, is cancelled)."""

    async def ask(params: dict[str, Any]) -> dict[str, Any]:
        from pycore.mcp.elicitation import link_host

        if not worker.runs:
            return {"action": "cancel"}
        question = uuid.uuid4().hex[:16]
        answer = worker.elicitations.expect(question)
        run = worker.runs[-1]
        worker.questions[question] = (params, run)
        url = params.get("url") if params.get("mode") == "url" else None
        try:
            form = None if url else params.get("requestedSchema")
            run.emit(_event("elicitation", id=question, server_id=server_id, mode="url" if url else "form",
                            message=str(params["message"]), requested_schema=form, url=url,
                            url_host=link_host(url) if url else None))
            result: dict[str, Any] = await answer
            return result
        finally:
            worker.questions.pop(question, None)
            if not answer.done():
                answer.cancel()

    return ask


@method("mcp.elicitation_result", params=ElicitationAnswerParams, result=Empty)
async def mcp_elicitation_result(params: ElicitationAnswerParams, emit: Emit, worker: WorkerState) -> Empty:
    """The user's answer: a form's content is checked (defaults filled in) before it goes to the server, so a
    problem comes back to the page, named, and the question stays open."""
    from pycore.mcp.elicitation import accept

    if params.id not in worker.questions:
        worker.elicitations.resolve(params.id, None)  # raises: nobody is waiting for this id
        return Empty()
    asked, _run = worker.questions[params.id]
    answer: dict[str, Any] = {"action": params.action}
    if params.action == "accept" and asked.get("mode", "form") == "form":
        answer["content"] = accept(asked["requestedSchema"], params.content)
    worker.elicitations.resolve(params.id, answer)
    return Empty()


def sampler(server_id: str, worker: WorkerState) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
    """A server's sampling request (:mod:`pycore.mcp.sampling`): shown to the user in the newest running chat.run
    (its text, images and size: all that would be sent), run on its model within the user's budget once approved
    (as edited), and its answer sent back only when the user says so. No run going: nobody to ask, so it is denied.
    More text than the user's limit, or more than :data:`~pycore.mcp.sampling.MAX_OPEN` requests of this server
    open at once: refused without asking, and the card says so (a ``refused`` stage)."""
    open_requests = 0

    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        nonlocal open_requests
        from pycore.mcp.sampling import MAX_OPEN, SamplingDenied

        if not worker.runs:
            raise SamplingDenied("sampling needs a conversation in progress to ask the user")
        run = worker.runs[-1]
        if open_requests >= MAX_OPEN:
            run.emit(_event("sampling", id=uuid.uuid4().hex[:16], server_id=server_id, stage="refused",
                            model=run.model, max_tokens=1, refused="too_many", limit=MAX_OPEN))
            raise SamplingDenied(f"refused: this server already has {MAX_OPEN} requests for the model open at once")
        open_requests += 1
        try:
            return await _sample(server_id, worker, run, params)
        finally:
            open_requests -= 1

    return sample


async def _sample(server_id: str, worker: WorkerState, run: ActiveRun, params: dict[str, Any]) -> dict[str, Any]:
    from pycore.mcp.sampling import SamplingDenied, edited, input_chars, shown, to_messages, to_result
    from pycore.messages import ChatRequest

    sample_id = uuid.uuid4().hex[:16]
    asked = int(params.get("maxTokens") or run.sampling_max_tokens)
    max_tokens = max(1, min(asked, run.sampling_max_tokens))
    hints = [str(h.get("name")) for h in (params.get("modelPreferences") or {}).get("hints") or []
             if isinstance(h, dict) and h.get("name")]
    request = to_messages(params.get("messages") or [])
    size = input_chars(request, params.get("systemPrompt"))
    event = partial(_event, "sampling", id=sample_id, server_id=server_id, model=run.model, max_tokens=max_tokens)
    if size > run.sampling_max_input_chars:
        run.emit(event(stage="refused", refused="too_large", input_chars=size, limit=run.sampling_max_input_chars))
        raise SamplingDenied(f"refused: {size} characters of text, more than the user's limit of "
                             f"{run.sampling_max_input_chars}")
    worker.sampling_runs[sample_id] = run
    try:
        decision = worker.samplings.expect(sample_id)
        run.emit(event(stage="request", messages=shown(request), input_chars=size,
                       system_prompt=params.get("systemPrompt"), model_hints=hints))
        answer = await decision
        if answer["action"] != "approve":
            raise SamplingDenied("the user denied the sampling request")
        messages = edited(request, answer["messages"]) if answer.get("messages") else request
        system = answer["system_prompt"] if answer.get("system_prompt") is not None else params.get("systemPrompt")
        stream = run.client.stream(ChatRequest(model=run.model, messages=messages, system=system,
                                               max_tokens=max_tokens, temperature=params.get("temperature")))
        async for _streamed in stream:  # streamed, as every request of the app is; the answer is shown whole
            pass
        completion = stream.completion
        if completion is None or completion.error is not None:
            raise RuntimeError(completion.error.message if completion and completion.error else "no answer")
        decision = worker.samplings.expect(sample_id)
        run.emit(event(stage="result", text=completion.text(), stop_reason=completion.finish_reason))
        if (await decision)["action"] != "send":
            raise SamplingDenied("the user did not send the model's answer")
        return to_result(completion, run.model)
    finally:
        worker.sampling_runs.pop(sample_id, None)


@method("mcp.sampling_answer", params=SamplingAnswerParams, result=Empty)
async def mcp_sampling_answer(params: SamplingAnswerParams, emit: Emit, worker: WorkerState) -> Empty:
    """The user's answer to a ``sampling`` event's stage: approve (as edited) or deny a request, send or deny its
    result."""
    answer: dict[str, Any] = {"action": params.action}
    if params.messages is not None:
        if not params.messages or any(m.get("role") not in ("user", "assistant") or not isinstance(m.get("text"), str)
                                      for m in params.messages):
            raise ValueError("messages must be [{role: 'user' | 'assistant', text}], at least one")
        answer["messages"] = params.messages
    if params.system_prompt is not None:
        answer["system_prompt"] = params.system_prompt
    worker.samplings.resolve(params.id, answer)
    return Empty()


@method("mcp.set_roots", params=RootsParams, result=Empty)
async def mcp_set_roots(params: RootsParams, emit: Emit, worker: WorkerState) -> Empty:
    """The user's roots, answered to every server's ``roots/list``; connected servers are told they changed."""
    from pycore.mcp.errors import MCPError

    worker.roots = [root.model_dump(exclude_none=True) for root in params.roots]
    for conn in list(worker.connections.values()):
        if conn.status == "connected":
            try:
                await conn.session.roots_changed()
            except MCPError:  # a server gone meanwhile asks again when it is reconnected
                continue
    return Empty()
