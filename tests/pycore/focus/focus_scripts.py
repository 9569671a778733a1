"""Classifier answers in each vendor's real wire format, for the replay transport (stdlib only).

Every body starts from a real recording in ``tests/fixtures/vendors`` and changes only what the
classifier's answer changes: the forced tool's arguments (OpenAI Chat, Responses, Anthropic) or the
JSON text (Gemini's and Ollama's JSON modes), and the usage counts. Error bodies are the vendors'
real recorded error bodies, served with their real status; the 500s reuse the vendor's recorded
error envelope with status 500.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from vendor_fixtures import VENDORS_DIR

from pycore.http.replay import Recording

TOOL = "record_classification"
VENDORS = ("openai", "openai-responses", "anthropic", "gemini", "ollama")


def _load(path: str) -> Any:
    return json.loads((VENDORS_DIR / path).read_text("utf-8"))


def _responses_completed() -> dict[str, Any]:
    """The ``response`` object of the recorded ``response.completed`` event (a whole response)."""
    text = (VENDORS_DIR / "openai/responses-stream-function-call.sse").read_text("utf-8")
    for block in text.split("\n\n"):
        if block.startswith("event: response.completed"):
            return json.loads(block.split("data: ", 1)[1])["response"]
    raise AssertionError("no response.completed event in the recording")


TEMPLATES: dict[str, Any] = {
    "openai": _load("openai/chat-nonstream-text.json"),
    "openai-responses": _responses_completed(),
    "anthropic": _load("anthropic/message-text-tool-use.json"),
    "gemini": _load("gemini/nonstream-text.json"),
    "ollama": _load("ollama/chat-nonstream-text-docs.json"),
}
ERROR_429 = {
    "openai": "openai/error-429-insufficient-quota.json",
    "openai-responses": "openai/error-429-insufficient-quota.json",
    "anthropic": "anthropic/error-429-rate-limit.json",
    "gemini": "gemini/error-429-resource-exhausted.json",
}
ERROR_ENVELOPE = {
    "openai": "openai/error-401-invalid-api-key.json",
    "openai-responses": "openai/error-401-invalid-api-key.json",
    "anthropic": "anthropic/error-529-overloaded.json",
    "gemini": "gemini/error-404-model-not-found.json",
    "ollama": "ollama/error-404-model-not-found.json",
}


def answer(vendor: str, payload: Any, *, usage: tuple[int, int] = (300, 40), raw: str | None = None) -> Recording:
    """A 200 answer carrying ``payload`` (a dict, dumped) or ``raw`` (text as is, e.g. broken JSON)."""
    return Recording(answer_body(vendor, payload, usage=usage, raw=raw))


def answer_body(vendor: str, payload: Any, *, usage: tuple[int, int] = (300, 40), raw: str | None = None) -> bytes:
    """The body of :func:`answer`: the vendor's recorded non-streamed reply, carrying the classification."""
    text = raw if raw is not None else json.dumps(payload)
    body = copy.deepcopy(TEMPLATES[vendor])
    prompt, completion = usage
    if vendor == "openai":
        call = {"id": "call_ZR5UUuTt3pf61kjwAJIYdVMj", "type": "function",
                "function": {"name": TOOL, "arguments": text}}
        body["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": [call], "refusal": None,
                                         "annotations": []}
        body["choices"][0]["finish_reason"] = "tool_calls"
        body["usage"].update(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)
    elif vendor == "openai-responses":
        body["output"][0].update(name=TOOL, arguments=text)
        body["usage"].update(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion)
    elif vendor == "anthropic":
        if raw is None:
            body["content"] = [dict(body["content"][1], name=TOOL, input=payload)]
        else:  # the API only sends parsed tool input: broken JSON can only come as text
            body["content"] = [dict(body["content"][0], text=raw)]
            body["stop_reason"] = "end_turn"
        body["usage"].update(input_tokens=prompt, output_tokens=completion)
    elif vendor == "gemini":
        body["candidates"][0]["content"]["parts"] = [{"text": text}]
        body["usageMetadata"].update(promptTokenCount=prompt, candidatesTokenCount=completion,
                                     totalTokenCount=prompt + completion)
        body["usageMetadata"].pop("thoughtsTokenCount", None)
    elif vendor == "ollama":
        body["message"]["content"] = text
        body.update(prompt_eval_count=prompt, eval_count=completion, done_reason="stop")
    else:
        raise AssertionError(vendor)
    return json.dumps(body).encode()


def empty(vendor: str) -> Recording:
    """A 200 answer with nothing in it: no tool call, no text."""
    body = copy.deepcopy(TEMPLATES[vendor])
    if vendor == "openai":
        body["choices"][0]["message"].update(content="", tool_calls=None)
    elif vendor == "openai-responses":
        body["output"] = []
    elif vendor == "anthropic":
        body["content"] = []
        body["stop_reason"] = "end_turn"
    elif vendor == "gemini":
        body["candidates"][0]["content"]["parts"] = [{"text": ""}]
    elif vendor == "ollama":
        body["message"]["content"] = ""
    return Recording(json.dumps(body).encode())


def rate_limited(vendor: str) -> Recording:
    if vendor == "ollama":  # no recorded 429: Ollama's own error envelope, {"error": str}
        return Recording(json.dumps({"error": "too many requests"}).encode(), status=429)
    return Recording((VENDORS_DIR / ERROR_429[vendor]).read_bytes(), status=429)


def server_error(vendor: str) -> Recording:
    """The vendor's recorded error envelope, served with status 500."""
    body = _load(ERROR_ENVELOPE[vendor])
    if vendor == "ollama":
        body = {"error": "an internal error occurred"}
    else:
        body["error"]["message"] = "The server had an error while processing your request."
    return Recording(json.dumps(body).encode(), status=500)


def not_json(vendor: str) -> Recording:
    return answer(vendor, None, raw='{"labels": ["QUESTION"], "reason": "cut off')
