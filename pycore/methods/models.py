"""``models.list {provider} -> {models: [{id, name?}]}``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pycore.contract.params import ProviderParams
from pycore.methods._provider import make_client
from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.methods._state import WorkerState


@method("models.list", params=ProviderParams)
async def list_models(params: ProviderParams, emit: Emit, worker: WorkerState) -> dict[str, Any]:
    client = make_client(params.provider, worker)
    try:
        models = await client.list_models()
    finally:
        await client.transport.aclose()
    return {"models": [model.model_dump(mode="json", include={"id", "name"}, exclude_none=True) for model in models]}
