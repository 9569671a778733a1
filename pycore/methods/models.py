"""``models.list {provider} -> {models: [{id, name?}]}``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pycore.contract.params import ProviderParams
from pycore.contract.results import ModelEntry, ModelsResult
from pycore.methods._provider import make_client
from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.methods._state import WorkerState


@method("models.list", params=ProviderParams, result=ModelsResult)
async def list_models(params: ProviderParams, emit: Emit, worker: WorkerState) -> ModelsResult:
    client = make_client(params.provider, worker)
    try:
        models = await client.list_models()
    finally:
        await client.transport.aclose()
    return ModelsResult(models=[ModelEntry(id=model.id, name=model.name) for model in models])
