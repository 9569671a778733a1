"""One adapter per vendor, each in its own module; this module only names them.

=================== ========================================= ===================================
name                module                                    wire format
=================== ========================================= ===================================
``openai``          :mod:`pycore.adapters.openai`             Chat Completions (+ compatibles)
``openai-responses`` :mod:`pycore.adapters.openai_responses`  Responses API
``anthropic``       :mod:`pycore.adapters.anthropic`          Messages API
``gemini``          :mod:`pycore.adapters.gemini`             generateContent / SSE
``ollama``          :mod:`pycore.adapters.ollama`             native ``/api/chat`` NDJSON
``fake``            :mod:`pycore.adapters.fake`               scripted model for tests and demos
=================== ========================================= ===================================

Modules are imported on first use (the browser boots faster).
"""

from __future__ import annotations

import importlib
from typing import Any

from pycore.adapters._base import Adapter, StreamParser

_ADAPTERS = {
    "openai": ("pycore.adapters.openai", "OpenAIChatAdapter"),
    "openai-responses": ("pycore.adapters.openai_responses", "OpenAIResponsesAdapter"),
    "anthropic": ("pycore.adapters.anthropic", "AnthropicAdapter"),
    "gemini": ("pycore.adapters.gemini", "GeminiAdapter"),
    "ollama": ("pycore.adapters.ollama", "OllamaAdapter"),
    "fake": ("pycore.adapters.fake", "FakeAdapter"),
}
VENDORS = tuple(_ADAPTERS)


def adapter_class(vendor: str) -> type[Adapter]:
    try:
        module, name = _ADAPTERS[vendor]
    except KeyError:
        raise ValueError(f"unknown vendor {vendor!r}; known: {', '.join(VENDORS)}") from None
    cls: type[Adapter] = getattr(importlib.import_module(module), name)
    return cls


def get_adapter(vendor: str, **kwargs: Any) -> Adapter:
    return adapter_class(vendor)(**kwargs)


__all__ = ["VENDORS", "Adapter", "StreamParser", "adapter_class", "get_adapter"]
