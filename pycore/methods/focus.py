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

from pycore.contract.params import (
    ClassifierSpec,
    ClassifyParams,
    FocusParams,
    SynthesizeParams,
    TemplatesParams,
    UpdateParams,
)
from pycore.contract.results import ClassifierResult, FocusExport, Synthesis, Templates, UpdateResult
from pycore.methods._provider import make_client
from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.focus import Classifier
    from pycore.methods._state import WorkerState

def _state(params: FocusParams) -> Any:
    from pycore.focus import FocusState

    return FocusState.from_export(params.state)


def _classifier(spec: ClassifierSpec, worker: WorkerState) -> Classifier:
    from pycore.focus import Classifier

    return Classifier(make_client(spec.provider, worker), spec.model, strategy=spec.strategy)


@method("focus.synthesize", params=SynthesizeParams, result=Synthesis)
async def focus_synthesize(params: SynthesizeParams, emit: Emit, worker: WorkerState) -> Synthesis:
    from pycore.focus import synthesize

    result = synthesize(_state(params), params.text, base_system=params.system, budget=params.budget,
                        locale=params.locale, overrides=params.templates or None)
    return result


@method("focus.classify", params=ClassifyParams, result=ClassifierResult)
async def focus_classify(params: ClassifyParams, emit: Emit, worker: WorkerState) -> ClassifierResult:
    state = _state(params)
    classifier = _classifier(params.classifier, worker)
    try:
        result = await classifier.classify(params.text, state)
    finally:
        await classifier.client.transport.aclose()
    return result


@method("focus.update", params=UpdateParams, result=UpdateResult)
async def focus_update(params: UpdateParams, emit: Emit, worker: WorkerState) -> UpdateResult:
    from pycore.focus import update_focus

    state = _state(params)
    classified = ClassifierResult.model_validate(params.classified) if params.classified else None
    classifier = _classifier(params.classifier, worker) if params.classifier and classified is None else None
    try:
        result = await update_focus(state, message_id=params.message.id, text=params.message.text,
                                    reply=params.reply, classifier=classifier, classified=classified)
    finally:
        if classifier is not None:
            await classifier.client.transport.aclose()
    return result


@method("focus.templates", params=TemplatesParams, result=Templates)
async def focus_templates(params: TemplatesParams, emit: Emit, worker: WorkerState) -> Templates:
    from pycore.focus.prompts import LOCALES, SYNTHESIS_TEMPLATES, TemplateError, check, default_source, locale_of

    locale = locale_of(params.locale)
    errors: dict[str, str] = {}
    for name, source in params.templates.items():
        try:
            check({name: source})
        except TemplateError as e:
            errors[name] = str(e)
    templates = {name: default_source(name, locale) for name in SYNTHESIS_TEMPLATES}
    return Templates(locale=locale, locales=list(LOCALES), templates=templates, errors=errors)


@method("focus.validate", params=FocusParams, result=FocusExport)
async def focus_validate(params: FocusParams, emit: Emit, worker: WorkerState) -> FocusExport:
    return FocusExport(state=_state(params).to_export())
