"""Where the wire methods register: ``@method("name", params=P, result=R)`` puts a handler in :data:`METHODS`. A
handler is ``async (params, emit, state) -> R``: ``state`` is the worker's :class:`~pycore.methods._state.WorkerState`;
``params`` is a ``P`` (:mod:`pycore.contract.params`), validated by the wire before the handler runs; the handler
returns an ``R`` (:mod:`pycore.contract.results`), which the wire sends as JSON.

The method modules import this, never :mod:`pycore.wire`; the wire imports :mod:`pycore.methods` (which
imports every method module) and reads :data:`METHODS`. So the dependency runs one way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    from pycore.methods._state import WorkerState

Emit = Callable[[dict[str, Any]], None]
Handler = Callable[[Any, Emit, "WorkerState"], Awaitable[Any]]

H = TypeVar("H", bound=Handler)

METHODS: dict[str, Handler] = {}
PARAMS: dict[str, type[BaseModel]] = {}  # the methods' params models, by method name
RESULTS: dict[str, type[BaseModel]] = {}  # the methods' result models, by method name


def method(name: str, params: type[BaseModel], result: type[BaseModel]) -> Callable[[H], H]:
    def register(handler: H) -> H:
        METHODS[name] = handler
        PARAMS[name] = params
        RESULTS[name] = result
        return handler

    return register
