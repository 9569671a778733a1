"""A core method called as the page calls it (``pycore.wire.start``, JSON in and out), for the tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pycore import wire


async def call(method: str, params: dict[str, Any], on_event: Callable[[dict[str, Any]], Any] | None = None
               ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The method's result and the events it streamed (each also given to ``on_event`` as it comes)."""
    events: list[dict[str, Any]] = []

    def emit(text: str) -> None:
        events.append(json.loads(text))
        if on_event:
            on_event(events[-1])

    return json.loads(await wire.start(method, json.dumps(params), emit)), events
