"""Focus memory's classifier answers in each vendor's real wire format, for vendor_replay.

Each body starts from a real non-streamed recording in /work/shared/fixtures/vendors and changes only
what the classifier's answer changes: the forced tool call (OpenAI Chat, Anthropic) or the JSON text
(Gemini's and Ollama's JSON modes), and the usage counts. The same approach as
tests/pycore/focus/focus_scripts.py, without its pycore imports (this runs beside the browser).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from vendor_replay import FIXTURES

TOOL = "record_classification"  # pycore.focus.classification.TOOL_NAME
USAGE = (300, 40)  # input, output tokens each answer reports

TEMPLATES: dict[str, Any] = {
    "openai": "openai/chat-nonstream-text.json",
    "anthropic": "anthropic/message-text-tool-use.json",
    "gemini": "gemini/nonstream-text.json",
    "ollama": "ollama/chat-nonstream-text-docs.json",
}
# The chat reply each turn gets (a real streamed recording) and where it puts the system prompt.
CHAT = {"openai": "openai/chat-stream-text-usage", "anthropic": "anthropic/stream-text",
        "gemini": "gemini/stream-text", "ollama": "ollama/chat-stream-text"}


def system_of(vendor: str, body: dict[str, Any]) -> str:
    """The system prompt of a chat request, as each vendor's wire carries it."""
    if vendor in ("openai", "ollama"):
        first = body["messages"][0]
        assert first["role"] == "system", first
        content = first["content"]
        return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
    if vendor == "anthropic":
        system = body["system"]
        return system if isinstance(system, str) else "".join(p.get("text", "") for p in system)
    if vendor == "gemini":
        return "".join(p.get("text", "") for p in body["systemInstruction"]["parts"])
    raise AssertionError(vendor)


def is_classifier_request(vendor: str, body: dict[str, Any]) -> bool:
    if vendor in ("openai", "anthropic"):
        return "tool_choice" in body
    if vendor == "gemini":
        return "responseMimeType" in body.get("generationConfig", {})
    return "format" in body


def answer(vendor: str, payload: dict[str, Any] | None = None, *, raw: str | None = None) -> bytes:
    """A 200 answer carrying ``payload`` (the classification) or ``raw`` text (e.g. broken JSON)."""
    text = raw if raw is not None else json.dumps(payload)
    body = copy.deepcopy(json.loads((FIXTURES / TEMPLATES[vendor]).read_text("utf-8")))
    prompt, completion = USAGE
    if vendor == "openai":
        call = {"id": "call_ZR5UUuTt3pf61kjwAJIYdVMj", "type": "function", "function": {"name": TOOL, "arguments": text}}
        body["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": [call], "refusal": None,
                                         "annotations": []}
        body["choices"][0]["finish_reason"] = "tool_calls"
        body["usage"].update(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)
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


def labelled(labels: list[str], reason: str, **fields: Any) -> dict[str, Any]:
    return {"labels": labels, "reason": reason, "problem": "", "constraints": [], "decisions": [],
            "contradicts": [], **fields}
