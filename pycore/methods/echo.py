"""``core.echo {text} -> {text}``: the round trip page -> Python -> page, streaming each word as a
``text_delta`` event. The boot check and the protocol's own tests use it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.methods._state import WorkerState


@method("core.echo")
async def echo(params: dict[str, Any], emit: Emit, worker: WorkerState) -> dict[str, Any]:
    text = str(params.get("text", ""))
    for i, word in enumerate(text.split(" ")):
        emit({"type": "text_delta", "index": 0, "text": (" " if i else "") + word})
        await asyncio.sleep(0)
    return {"text": text}
