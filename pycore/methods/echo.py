"""``core.echo {text} -> {text}``: the round trip page -> Python -> page, streaming each word as a
``text_delta`` event. The boot check and the protocol's own tests use it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pycore.contract.params import EchoParams
from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.methods._state import WorkerState


@method("core.echo", params=EchoParams)
async def echo(params: EchoParams, emit: Emit, worker: WorkerState) -> dict[str, Any]:
    text = params.text
    for i, word in enumerate(text.split(" ")):
        emit({"type": "text_delta", "index": 0, "text": (" " if i else "") + word})
        await asyncio.sleep(0)
    return {"text": text}
