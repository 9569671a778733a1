"""Running the classifier: one cheap model call per user message, one retry, never an exception.

    classifier = Classifier(ChatClient(get_adapter("gemini", api_key=key)), model="gemini-2.5-flash-lite")
    result = await classifier.classify(text, state)      # ClassifierResult, always
    result.classification.labels                         # ["CONSTRAINT_ADDITION"], or ["UNCLEAR"]
    result.cost                                          # calls, failures and tokens of this message

The request asks for JSON the vendor's own way (:mod:`pycore.focus.strategy`) at temperature 0.
Output that is not a valid classification, a vendor error (429, 5xx...), an empty answer or a
timeout gets one retry; a second failure gives UNCLEAR with ``ok = False`` and a short error that
names the problem (status and type, never the key or the vendor's full text). The client is built
without retries of its own, so "one retry" is the whole retry budget.

Timing (see the package docs): the classifier runs after the reply, for the next turn, so it never
delays a first token.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from pycore.client import ChatClient
from pycore.exceptions import APIConnectionError, APIStatusError, BadRequestError, OrizuruError
from pycore.focus.classification import Classification, InvalidClassification, parse
from pycore.focus.prompts import render
from pycore.focus.results import ClassifierResult
from pycore.focus.state import Cost, FocusState
from pycore.focus.strategy import Strategy, classifier_request, resolve
from pycore.http.retry import RetryPolicy
from pycore.messages import Completion

NO_RETRIES = RetryPolicy(max_retries=0)
TIMEOUT = 30.0  # seconds for one attempt
RETRY_PAUSE = 0.5  # seconds before the retry after a vendor error
MAX_MESSAGE_CHARS = 6000  # the classifier reads the start of a very long message


class Classifier:
    def __init__(
        self,
        client: ChatClient,
        model: str,
        *,
        strategy: Strategy = "auto",
        timeout: float = TIMEOUT,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        client.retry = NO_RETRIES
        self.client = client
        self.model = model
        self.vendor = client.adapter.vendor
        self.strategy = strategy
        self.timeout = timeout
        self._sleep = sleep

    def system_prompt(self, state: FocusState) -> str:
        items = [{"id": item.id, "text": item.text} for item in state.evolving]
        return render("classifier.j2", {"mission": state.core.text if state.core else "", "constraints": items})

    async def classify(self, text: str, state: FocusState | None = None) -> ClassifierResult:
        state = state or FocusState()
        system = self.system_prompt(state)
        message = text[:MAX_MESSAGE_CHARS] if text.strip() else "(empty message)"
        cost = Cost()
        temperature: float | None = 0.0
        error = ""
        for attempt in (1, 2):
            request = classifier_request(self.vendor, self.model, system, message, strategy=self.strategy,
                                         temperature=temperature)
            cost = cost.add(Cost(calls=1))
            try:
                completion = await asyncio.wait_for(self.client.complete(request), self.timeout)
                cost = cost.add(_usage(completion))
                classification = parse(completion)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - whatever the vendor sends, the chat goes on
                error = describe(e)
                cost = cost.add(Cost(failures=1))
                if _refuses_temperature(e):
                    temperature = None  # reasoning models accept only their default temperature
                elif isinstance(e, (APIStatusError, APIConnectionError)) and attempt == 1:
                    await self._sleep(RETRY_PAUSE)
                continue
            return ClassifierResult(classification=classification, ok=True, attempts=attempt, cost=cost,
                                    strategy=resolve(self.vendor, self.strategy), error=error or None)
        return ClassifierResult(classification=Classification.unclear(f"classifier failed: {error}"), ok=False,
                                attempts=2, cost=cost, strategy=resolve(self.vendor, self.strategy), error=error)


def _usage(completion: Completion) -> Cost:
    usage = completion.usage
    if usage is None:
        return Cost()
    return Cost(input_tokens=usage.input_tokens or 0, output_tokens=usage.output_tokens or 0)


def _refuses_temperature(error: Exception) -> bool:
    return isinstance(error, BadRequestError) and "temperature" in error.vendor_message.lower()


def describe(error: Exception) -> str:
    """A short cause for the panel: no key, no echo of the vendor's whole message."""
    if isinstance(error, APIStatusError):
        return f"vendor error {error.status}" + (f" {error.type}" if error.type else "")
    if isinstance(error, asyncio.TimeoutError | TimeoutError):
        return "no answer in time"
    if isinstance(error, APIConnectionError):
        return "connection failed"
    if isinstance(error, InvalidClassification):
        return str(error)
    if isinstance(error, OrizuruError):
        return f"unreadable answer ({type(error).__name__})"
    return f"unexpected {type(error).__name__}"
