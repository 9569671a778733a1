"""The page's provider object → a ChatClient. The API key goes into the adapter and nowhere else."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pycore.client import ChatClient
    from pycore.http import Transport
    from pycore.methods._state import WorkerState

def use_transport(factory: Callable[[], Transport] | None) -> None:
    """Tests: serve every vendor request from ``factory()`` instead of the network (None: back to it)."""
    from pycore.methods._state import STATE

    STATE.transport_factory = factory


def make_client(provider: Any, worker: WorkerState) -> ChatClient:
    from pycore.adapters import catalogue, get_adapter, resolve_vendor
    from pycore.client import ChatClient

    if not isinstance(provider, dict) or not provider.get("vendor"):
        raise ValueError("provider must be an object with a vendor: " + ", ".join(v.id for v in catalogue()))
    vendor, info = resolve_vendor(provider["vendor"])  # fake (the scripted model of tests) included
    base_url = provider.get("base_url") or info.default_base_url  # an alias's own address (OpenRouter's, …)
    if info.needs_base_url and not base_url:
        raise ValueError(f"an {info.id} provider needs a base_url (e.g. http://localhost:8000/v1)")
    adapter = get_adapter(vendor, api_key=provider.get("api_key") or None, base_url=base_url)
    adapter.chosen = info.id
    factory = worker.transport_factory
    return ChatClient(adapter, factory() if factory else None)
