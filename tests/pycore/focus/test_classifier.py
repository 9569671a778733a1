"""The classifier's retry rule on every vendor: invalid output or a vendor error gets one retry, a
second failure gives UNCLEAR; it never raises and never waits for the client's own retries."""

from __future__ import annotations

import asyncio
import json

import focus_scripts as fs
import pytest

from pycore.adapters import get_adapter
from pycore.client import ChatClient
from pycore.focus import Classifier, FocusState
from pycore.focus.state import Item
from pycore.http.replay import Recording, ReplayTransport

pytestmark = pytest.mark.pyodide
KEY = "sk-proj-focusclassifiertestkey0000"
QUESTION = {"labels": ["QUESTION"], "reason": "asks", "problem": "", "constraints": [], "decisions": [],
            "contradicts": []}


async def no_wait(seconds: float) -> None:
    await asyncio.sleep(0)


def classifier(vendor: str, recordings: list[Recording], **kwargs) -> tuple[Classifier, ReplayTransport]:
    transport = ReplayTransport(recordings)
    client = ChatClient(get_adapter(vendor, api_key=KEY), transport)
    return Classifier(client, "small", sleep=no_wait, **kwargs), transport


FAULTS = {
    "not_json": fs.not_json,
    "empty": fs.empty,
    "rate_limited": fs.rate_limited,
    "server_error": fs.server_error,
    "wrong_labels": lambda v: fs.answer(v, {**QUESTION, "labels": ["GREETING"]}),
    "three_labels": lambda v: fs.answer(v, {**QUESTION, "labels": ["QUESTION", "REFINEMENT", "UNCLEAR"]}),
}


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("vendor", fs.VENDORS)
async def test_one_fault_is_retried_once(vendor, fault):
    c, transport = classifier(vendor, [FAULTS[fault](vendor), fs.answer(vendor, QUESTION, usage=(120, 30))])
    result = await c.classify("Which museum first?")
    assert result.ok and result.attempts == 2 and result.classification.labels == ["QUESTION"]
    assert len(transport.requests) == 2 and result.cost.calls == 2 and result.cost.failures == 1
    assert result.cost.input_tokens >= 120 and result.error  # the first failure is still reported


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("vendor", fs.VENDORS)
async def test_two_faults_give_unclear_and_name_the_cause(vendor, fault):
    c, transport = classifier(vendor, [FAULTS[fault](vendor), FAULTS[fault](vendor), fs.answer(vendor, QUESTION)])
    result = await c.classify("Which museum first?")
    assert not result.ok and result.classification.labels == ["UNCLEAR"] and len(transport.requests) == 2
    expected = {"rate_limited": "vendor error 429", "server_error": "vendor error 500", "empty": "empty",
                "not_json": "not JSON", "wrong_labels": "labels.0", "three_labels": "labels"}[fault]
    assert expected in result.error and expected in result.classification.reason
    assert KEY not in result.model_dump_json()


async def test_the_client_does_not_retry_on_its_own():
    c, transport = classifier("openai", [fs.rate_limited("openai")] * 5)
    result = await c.classify("x")
    assert not result.ok and len(transport.requests) == 2


async def test_a_model_that_refuses_temperature_is_asked_again_without_it():
    refusal = {"error": {"message": "Unsupported value: 'temperature' does not support 0 with this model. Only the "
                         "default (1) value is supported.", "type": "invalid_request_error", "param": "temperature",
                         "code": "unsupported_value"}}
    c, transport = classifier("openai", [Recording(json.dumps(refusal).encode(), status=400),
                                         fs.answer("openai", QUESTION)])
    result = await c.classify("x")
    assert result.ok and result.attempts == 2
    first, second = (json.loads(r.body) for r in transport.requests)
    assert first["temperature"] == 0 and "temperature" not in second


async def test_no_answer_in_time_and_no_connection_give_unclear():
    slow = fs.answer("gemini", QUESTION)
    slow.delay, slow.chunk_size = 0.5, 8
    c, _ = classifier("gemini", [slow, Recording(b"", connect_error=True)], timeout=0.05)
    result = await c.classify("x")
    assert not result.ok and result.error == "connection failed"
    c, _ = classifier("gemini", [slow], timeout=0.05)
    assert (await c.classify("x")).error == "no answer in time"


async def test_the_classifier_sees_the_goal_and_the_constraints_with_their_ids():
    state = FocusState(evolving=[Item(id="c1", text="Budget under 6000 EUR"), Item(id="c3", text="No night trains")])
    c, transport = classifier("anthropic", [fs.answer("anthropic", QUESTION)])
    await c.classify("Can we take the night train?", state)
    system = json.loads(transport.requests[0].body)["system"]
    assert "- c1: Budget under 6000 EUR" in system and "- c3: No night trains" in system


async def test_an_empty_message_is_still_classified():
    c, transport = classifier("ollama", [fs.answer("ollama", {**QUESTION, "labels": ["UNCLEAR"]})])
    assert (await c.classify("   ")).ok
    assert json.loads(transport.requests[0].body)["messages"][-1]["content"] == "(empty message)"
