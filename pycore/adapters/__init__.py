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
from typing import Any, Literal

from pydantic import BaseModel

from pycore.adapters._base import Adapter, StreamParser, VendorAlias

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


class VendorInfo(BaseModel):
    """One choice of vendor the user has, as its adapter declares it (an alias is a choice too)."""

    id: str  # what a profile stores and ``chat.run``'s ``provider.vendor`` takes
    adapter: str  # the adapter that speaks to it
    label: str
    needs_key: bool
    needs_base_url: bool = False  # no default address: the user's own server
    default_base_url: str | None = None
    temperature: bool = True  # it takes a temperature
    reasoning: Literal["effort", "budget"] | None = None  # it takes a reasoning effort, a thinking budget, or neither


def catalogue(*, include_fake: bool = False) -> list[VendorInfo]:
    """Every vendor the user can pick, from the adapters' declarations; the build embeds it in the page
    (its Settings list, which vendors need a key) so no vendor list is written out anywhere else."""
    out: list[VendorInfo] = []
    aliases: list[VendorInfo] = []  # listed after the vendors themselves
    for name in VENDORS:
        if name == "fake" and not include_fake:
            continue
        cls = adapter_class(name)
        knobs = {"temperature": cls.temperature, "reasoning": cls.reasoning}
        out.append(VendorInfo(id=name, adapter=name, label=cls.label, needs_key=cls.needs_key,
                              default_base_url=cls.default_base_url, **knobs))
        aliases += [VendorInfo(id=alias.id, adapter=name, label=alias.label, needs_key=alias.needs_key,
                               needs_base_url=alias.needs_base_url,
                               default_base_url=alias.base_url or (None if alias.needs_base_url
                                                                   else cls.default_base_url), **knobs)
                    for alias in cls.aliases]
    return out + aliases


def resolve_vendor(choice: str) -> tuple[str, VendorInfo]:
    """The adapter for a vendor the user picked (an alias included) and what the catalogue says of it."""
    for info in catalogue(include_fake=True):
        if info.id == choice:
            return info.adapter, info
    known = ", ".join(info.id for info in catalogue())
    raise ValueError(f"unknown vendor {choice!r}; expected one of {known}")


__all__ = ["VENDORS", "Adapter", "StreamParser", "VendorAlias", "VendorInfo", "adapter_class", "catalogue",
           "get_adapter", "resolve_vendor"]
