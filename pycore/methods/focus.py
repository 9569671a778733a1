"""Focus memory over the page <-> worker protocol (``focus.*``).

The page keeps the focus state with the transcript (``store.setFocus``; exported as ``focus``),
sends it with each call and stores the state that comes back; the worker keeps nothing between
calls. ``State`` is :meth:`pycore.focus.FocusState.to_export`; ``Cost`` is
``{calls, failures, input_tokens, output_tokens}``; ``Classifier`` is
``{provider: {vendor, api_key?, base_url?}, model, strategy?: "auto"|"tool"|"json"}`` (the provider
object of ``chat.run``, usually a small cheap model on any vendor).

``focus.synthesize``  before each reply; no network
    {state, text, system?, budget?: int (2000), locale?: "en"|"ja", templates?: {name: source}}
    -> {system, messages: [Message], tokens, budget, recent, omitted, over_budget, warnings: [str]}
    ``system`` and ``messages`` replace ``chat.run``'s system and messages for this turn.
``focus.update``      after the reply, for the next turn (classifies unless ``classified`` is given)
    {state, message: {id?, text}, reply?: {text}, classifier?: Classifier, classified?: <focus.classify result>}
    -> {state, classification: {labels, reason, problem, constraints, decisions, contradicts} | null,
        ok, cost: Cost (this message), error: str | null}
``focus.classify``    the classifier alone
    {classifier: Classifier, text, state?} -> {classification, ok, attempts, cost, strategy, error}
``focus.templates``   {locale?, templates?} -> {locale, locales, templates: {name: source}, errors: {name: msg}}
``focus.validate``    {state} -> {state}   (import: an error names the bad field)

A failing classifier is not an error of these methods: ``ok`` is false, the labels are UNCLEAR and
``error`` says why (status and type only). Bad params are errors naming the param.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pycore.methods._provider import make_client
from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.focus import Classifier
    from pycore.methods._state import WorkerState

DEFAULT_BUDGET = 2000


def _text(value: Any, name: str) -> str:
    if isinstance(value, dict):
        value = value.get("text")
    if not isinstance(value, str):
        raise ValueError(f"focus: {name} must be a string (or {{text}}), not {type(value).__name__}")
    return value


def _state(params: dict[str, Any]) -> Any:
    from pycore.focus import FocusState

    return FocusState.from_export(params.get("state"))


def _classifier(spec: Any, worker: WorkerState) -> Classifier:
    from pycore.focus import Classifier
    from pycore.focus.strategy import STRATEGIES

    if not isinstance(spec, dict) or not spec.get("model"):
        raise ValueError("focus: classifier must be {provider: {vendor, api_key?, base_url?}, model, strategy?}")
    strategy = spec.get("strategy") or "auto"
    if strategy not in STRATEGIES:
        raise ValueError(f"focus: classifier.strategy must be auto, tool or json, not {strategy!r}")
    return Classifier(make_client(spec.get("provider"), worker), str(spec["model"]), strategy=strategy)


@method("focus.synthesize")
async def focus_synthesize(params: dict[str, Any], emit: Emit, worker: WorkerState) -> dict[str, Any]:
    from pycore.focus import synthesize

    budget = params.get("budget") or DEFAULT_BUDGET
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1:
        raise ValueError(f"focus: budget must be a positive number of tokens, not {budget!r}")
    result = synthesize(_state(params), _text(params.get("text"), "text"), base_system=params.get("system"),
                        budget=budget, locale=params.get("locale"), overrides=params.get("templates") or None)
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


@method("focus.classify")
async def focus_classify(params: dict[str, Any], emit: Emit, worker: WorkerState) -> dict[str, Any]:
    state, text = _state(params), _text(params.get("text"), "text")
    classifier = _classifier(params.get("classifier"), worker)
    try:
        result = await classifier.classify(text, state)
    finally:
        await classifier.client.transport.aclose()
    return result.model_dump(mode="json")


@method("focus.update")
async def focus_update(params: dict[str, Any], emit: Emit, worker: WorkerState) -> dict[str, Any]:
    from pycore.focus import ClassifierResult, update_focus

    state, message = _state(params), params.get("message")
    if not isinstance(message, dict):
        raise ValueError("focus: message must be {id?, text}")
    text, reply = _text(message, "message"), _text(params["reply"], "reply") if params.get("reply") else ""
    classified = ClassifierResult.model_validate(params["classified"]) if params.get("classified") else None
    classifier = _classifier(params["classifier"], worker) if params.get("classifier") and classified is None else None
    try:
        result = await update_focus(state, message_id=message.get("id"), text=text, reply=reply,
                                    classifier=classifier, classified=classified)
    finally:
        if classifier is not None:
            await classifier.client.transport.aclose()
    return result.model_dump(mode="json")


@method("focus.templates")
async def focus_templates(params: dict[str, Any], emit: Emit, worker: WorkerState) -> dict[str, Any]:
    from pycore.focus.prompts import LOCALES, SYNTHESIS_TEMPLATES, TemplateError, check, default_source, locale_of

    locale = locale_of(params.get("locale"))
    errors: dict[str, str] = {}
    for name, source in (params.get("templates") or {}).items():
        try:
            check({name: source})
        except TemplateError as e:
            errors[name] = str(e)
    templates = {name: default_source(name, locale) for name in SYNTHESIS_TEMPLATES}
    return {"locale": locale, "locales": list(LOCALES), "templates": templates, "errors": errors}


@method("focus.validate")
async def focus_validate(params: dict[str, Any], emit: Emit, worker: WorkerState) -> dict[str, Any]:
    return {"state": _state(params).to_export()}
