"""Focus memory's classifier answers in each vendor's real wire format, for vendor_replay.

Each body starts from a real non-streamed recording in tests/fixtures/vendors and changes only
what the classifier's answer changes: the forced tool call (OpenAI Chat, Anthropic) or the JSON text
(Gemini's and Ollama's JSON modes), and the usage counts. The bodies are built by
tests/pycore/focus/focus_scripts.py, the core's own focus tests, so both speak the same wire.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

TESTS_PYCORE = Path(__file__).resolve().parents[1] / "pycore"
sys.path += [str(TESTS_PYCORE / "focus"), str(TESTS_PYCORE)]  # focus_scripts and its vendor_fixtures, after ours
from focus_scripts import answer_body  # noqa: E402

USAGE = (300, 40)  # input, output tokens each answer reports
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
    """A 200 answer carrying ``payload`` (the classification) or ``raw`` text (e.g. broken JSON), built by
    the core's focus tests from the vendor's real recording."""
    return answer_body(vendor, payload, usage=USAGE, raw=raw)


def labelled(labels: list[str], reason: str, **fields: Any) -> dict[str, Any]:
    return {"labels": labels, "reason": reason, "problem": "", "constraints": [], "decisions": [],
            "contradicts": [], **fields}
