"""``core.echo {text} -> {text}``: the round trip page -> Python -> page, streaming each word as a
``text_delta`` event. The boot check and the protocol's own tests use it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from pycore.contract.params import EchoParams
from pycore.contract.results import EchoResult
from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.methods._state import WorkerState


@method("core.echo", params=EchoParams, result=EchoResult)
async def echo(params: EchoParams, emit: Emit, worker: WorkerState) -> EchoResult:
    text = params.text
    for i, word in enumerate(text.split(" ")):
        emit({"type": "text_delta", "index": 0, "text": (" " if i else "") + word})
        await asyncio.sleep(0)
    return EchoResult(text=text)
