"""How to get JSON out of each vendor's classifier model, expressed as :class:`ChatRequest` fields.

No adapter is changed for this: a forced tool is ``tool_choice`` naming one tool (every adapter
maps it), and a JSON mode is the vendor's own body field passed through ``vendor_options``.

============== ============ ==========================================================================
vendor         strategy     why
============== ============ ==========================================================================
openai         tool         a forced function works on OpenAI and on the compatibles (vLLM, Groq,
                            OpenRouter, LM Studio...) where ``json_schema`` response formats vary
openai-respon. tool         the same forced function; the answer arrives as a ``function_call`` item
anthropic      tool         Anthropic's documented way to get JSON: ``tool_choice: {type: tool}``
gemini         json         ``responseMimeType`` + ``responseSchema`` (controlled generation)
ollama         json         ``format: <JSON schema>`` (structured outputs); Ollama has no tool_choice
fake           tool         the scripted model answers with a tool call
============== ============ ==========================================================================

``strategy="tool"`` or ``"json"`` overrides the table (a compatible server that refuses one).
Either way :func:`pycore.focus.classification.parse` reads a tool call or JSON text.
"""

from __future__ import annotations

from typing import Any, Literal

from pycore.adapters import adapter_class
from pycore.focus.classification import TOOL_NAME, json_schema
from pycore.messages import ChatRequest, Message, NamedToolChoice, Tool

Strategy = Literal["auto", "tool", "json"]
STRATEGIES: tuple[Strategy, ...] = ("auto", "tool", "json")
TEMPERATURE = 0.0  # the issue allows up to 0.1; 0 makes the labels as repeatable as the vendor allows
MAX_OUTPUT_TOKENS = 400


def resolve(vendor: str, strategy: Strategy = "auto") -> Literal["tool", "json"]:
    """``auto`` is what the vendor's adapter declares (``classifier_mode``)."""
    if strategy != "auto":
        return strategy
    return adapter_class(vendor).classifier_mode


def json_mode_options(vendor: str) -> dict[str, Any]:
    """The body fields that switch on the vendor's JSON mode with our schema (declared by its adapter)."""
    return adapter_class(vendor).json_mode_options(TOOL_NAME, json_schema(), json_schema(closed=False))


def classifier_request(
    vendor: str,
    model: str,
    system: str,
    text: str,
    *,
    strategy: Strategy = "auto",
    temperature: float | None = TEMPERATURE,
) -> ChatRequest:
    request = ChatRequest(
        model=model,
        system=system,
        messages=[Message.user(text)],
        temperature=temperature,
        max_tokens=MAX_OUTPUT_TOKENS,
        stream=False,
    )
    if resolve(vendor, strategy) == "tool":
        description = "Record how the user's message is classified."
        tool = Tool(name=TOOL_NAME, description=description, inputSchema=json_schema())
        request.tools = [tool]
        request.tool_choice = NamedToolChoice(name=TOOL_NAME)
    else:
        request.vendor_options = json_mode_options(vendor)
    return request
