"""The page <-> worker protocol, Python side.

The JavaScript half, with the full message list, is ``web/protocol.js``; the two change together.
The worker calls three things here, always with JSON strings so that nothing crosses the
JS/Python boundary as a proxy:

- ``info() -> str``: what the core is (version, Python, methods); sent with the ``ready`` stage;
- ``start(method, params_json, emit) -> asyncio.Task``: run one method; the task's result is the
  JSON of the ``result`` message, and ``emit(event_json)`` sends each streamed ``event``. The
  worker cancels the task on the page's ``cancel``;
- nothing else: new capabilities are new entries in ``METHODS``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from pycore import __version__

Emit = Callable[[dict[str, Any]], None]
Handler = Callable[[dict[str, Any], Emit], Awaitable[Any]]

METHODS: dict[str, Handler] = {}


class UnknownMethodError(LookupError):
    """The page asked for a method the core does not have."""


def method(name: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        METHODS[name] = handler
        return handler

    return register


def info() -> str:
    return json.dumps({
        "version": __version__,
        "python": sys.version.split()[0],
        "platform": sys.platform,
        "methods": sorted(METHODS),
    })


def start(name: str, params_json: str, emit: Callable[[str], None]) -> asyncio.Task[str]:
    handler = METHODS.get(name)
    if handler is None:
        raise UnknownMethodError(f"unknown method {name!r}; the core has: {', '.join(sorted(METHODS))}")
    params = json.loads(params_json)

    async def run() -> str:
        result = await handler(params, lambda event: emit(json.dumps(event)))
        return json.dumps(result)

    return asyncio.ensure_future(run())


@method("core.echo")
async def echo(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """Stream the text back word by word: the round trip page -> Python -> page, with events."""
    text = str(params.get("text", ""))
    for i, word in enumerate(text.split(" ")):
        emit({"type": "text_delta", "text": (" " if i else "") + word})
        await asyncio.sleep(0)
    return {"text": text}
