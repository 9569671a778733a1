"""Vendors are declared by their adapters and nowhere else (issue "One contract" item 4)."""

from __future__ import annotations

import re

import pytest

from pycore.adapters import VENDORS, adapter_class, catalogue, resolve_vendor
from pycore.focus.strategy import json_mode_options, resolve
from pycore.methods._provider import make_client
from pycore.methods._state import WorkerState

pytestmark = pytest.mark.pyodide


def test_every_adapter_declares_what_the_page_and_the_core_need() -> None:
    for vendor in VENDORS:
        cls = adapter_class(vendor)
        assert cls.vendor == vendor and cls.label and isinstance(cls.needs_key, bool), vendor
        assert isinstance(cls.tool_name, re.Pattern) and cls.classifier_mode in ("tool", "json"), vendor
        assert isinstance(cls.json_mode_options("t", {"type": "object"}, {"type": "object"}), dict), vendor


def test_the_catalogue_lists_each_choice_once_aliases_last_and_without_the_test_model() -> None:
    ids = [v.id for v in catalogue()]
    assert ids == ["openai", "openai-responses", "anthropic", "gemini", "ollama", "openai-compatible", "openrouter",
                   "groq", "together", "deepseek", "mistral", "lm-studio", "vllm"]
    assert "fake" in [v.id for v in catalogue(include_fake=True)]
    compatible = resolve_vendor("openai-compatible")
    assert compatible[0] == "openai" and compatible[1].needs_base_url and not compatible[1].needs_key
    assert [v.id for v in catalogue() if not v.needs_key] == ["ollama", "openai-compatible", "lm-studio", "vllm"]
    with pytest.raises(ValueError, match="unknown vendor 'nope'; expected one of openai, "):
        resolve_vendor("nope")


def test_an_alias_speaks_its_adapters_api_and_needs_its_own_address() -> None:
    client = make_client({"vendor": "openai-compatible", "base_url": "http://127.0.0.1:8000/v1"}, WorkerState())
    assert client.adapter.vendor == "openai" and client.adapter.base_url == "http://127.0.0.1:8000/v1"
    with pytest.raises(ValueError, match="an openai-compatible provider needs a base_url"):
        make_client({"vendor": "openai-compatible"}, WorkerState())


def test_a_known_service_is_picked_by_name_and_its_own_address_is_the_default() -> None:
    """Issue 29 item 1: "OpenRouter" instead of typing its base URL; a Base URL typed (a proxy) still wins."""
    info = {v.id: v for v in catalogue()}
    assert info["openrouter"].default_base_url == "https://openrouter.ai/api/v1" and info["openrouter"].needs_key
    assert info["lm-studio"].default_base_url == "http://localhost:1234/v1" and not info["lm-studio"].needs_key
    client = make_client({"vendor": "openrouter", "api_key": "k"}, WorkerState())
    assert client.adapter.vendor == "openai" and client.adapter.base_url == "https://openrouter.ai/api/v1"
    proxied = make_client({"vendor": "groq", "base_url": "http://127.0.0.1:9/v1"}, WorkerState())
    assert proxied.adapter.base_url == "http://127.0.0.1:9/v1"


def test_focus_memory_asks_each_vendor_in_the_way_its_adapter_declares() -> None:
    assert {v: resolve(v) for v in VENDORS} == {"openai": "tool", "openai-responses": "tool", "anthropic": "tool",
                                                "gemini": "json", "ollama": "json", "fake": "tool"}
    assert json_mode_options("anthropic") == {}
    assert set(json_mode_options("gemini")["generationConfig"]) == {"responseMimeType", "responseSchema"}
    assert json_mode_options("openai")["response_format"]["json_schema"]["strict"] is True


def test_an_alias_is_a_typed_declaration_of_its_adapter_and_no_alias_shadows_a_vendor() -> None:
    declared = [(vendor, alias) for vendor in VENDORS for alias in adapter_class(vendor).aliases]
    assert {vendor for vendor, _ in declared} == {"openai"}  # compatible servers speak Chat Completions
    assert not {alias.id for _, alias in declared} & set(VENDORS)
    info = {v.id: v for v in catalogue()}
    assert info["openai-compatible"].default_base_url is None  # the user's own server: no address assumed
    assert info["openai"].default_base_url == adapter_class("openai").default_base_url
