"""The page <-> worker protocol, Python side.

The JavaScript half, with the full message list, is ``web/protocol.js``; the two change together.
The worker calls three things here, always with JSON strings so that nothing crosses the
JS/Python boundary as a proxy:

- ``info() -> str``: what the core is (version, Python, methods, and the vendors its adapters declare,
  :func:`pycore.adapters.catalogue`); sent with the ``ready`` stage;
- ``call(method, params_json, emit) -> asyncio.Task``: run one method; the task's result is the JSON
  ``{"result": ...}`` or ``{"error": {code, message, details}}`` (:mod:`pycore.contract`), and
  ``emit(events_json)`` sends the streamed events: a JSON array of those made in one step of the event loop.
  The worker cancels the task on the page's ``cancel``. (``start`` is the same for Python callers, raising the
  method's exception instead, and emitting each event on its own;)
- nothing else: new capabilities are new entries in ``METHODS``.

The methods live in :mod:`pycore.methods` (one module per concern), where they register themselves;
the dependency runs one way (the methods never import this module). What crosses the boundary
(events, parts, error codes) is declared in :mod:`pycore.contract`; the methods and events are listed
in ``docs/PROTOCOL.md``.

Secrets: the API key (``provider.api_key``) and credential headers (``Authorization``,
``X-API-Key``, ...) the page sends are replaced by ``[redacted]`` in every event, result and error
message that goes back, whatever produced the text (a vendor echoing the key, a tool, a bug).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Callable
from typing import Any, ClassVar

from pycore import __version__
from pycore.adapters import catalogue
from pycore.contract.params import validate
from pycore.exceptions import secrets_in
from pycore.methods import METHODS
from pycore.methods._registry import PARAMS, RESULTS
from pycore.methods._state import STATE


class UnknownMethodError(LookupError):
    """The page asked for a method the core does not have."""

    error_code: ClassVar[str] = "unknown_method"


class ContractError(Exception):
    """A method returned something other than its result model: a bug in the core, not in the call."""

    error_code: ClassVar[str] = "internal"


def info() -> str:
    return json.dumps({
        "version": __version__,
        "python": sys.version.split()[0],
        "platform": sys.platform,
        "methods": sorted(METHODS),
        "vendors": [vendor.model_dump(mode="json") for vendor in catalogue()],
    })


class WireError(Exception):
    """A method failed; raised in place of an error whose message held a secret (now redacted). It keeps
    the original's code and details (:mod:`pycore.contract`)."""

    def __init__(self, message: str, *, code: str, details: dict[str, Any]) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.details = details


def redactor(secrets: list[str]) -> Callable[[str], str]:
    """Replace each secret, in any letter case (a URL host is lower-cased), also as JSON escapes it."""
    forms = sorted({f for s in secrets for f in (s, json.dumps(s)[1:-1])}, key=len, reverse=True)
    if not forms:
        return lambda text: text
    pattern = re.compile("|".join(re.escape(f) for f in forms), re.IGNORECASE)

    def redact(text: str) -> str:
        return pattern.sub("[redacted]", text)

    return redact


def start(name: str, params_json: str, emit: Callable[[str], None]) -> asyncio.Task[str]:
    handler = METHODS.get(name)
    if handler is None:
        raise UnknownMethodError(f"unknown method {name!r}; the core has: {', '.join(sorted(METHODS))}")
    params = json.loads(params_json)
    if not isinstance(params, dict):
        raise TypeError(f"{name}: params must be a JSON object, not {type(params).__name__}")
    redact = redactor(secrets_in(params))
    model, result_model = PARAMS[name], RESULTS[name]

    async def run() -> str:
        try:
            args = validate(name, model, params)
            result = await handler(args, lambda event: emit(redact(json.dumps(event))), STATE)
        except Exception as e:
            message = str(e)
            clean = redact(message)
            if clean != message:
                from pycore.contract import error_code, error_details

                details = json.loads(redact(json.dumps(error_details(e))))
                raise WireError(f"{type(e).__name__}: {clean}", code=error_code(e), details=details) from None
            raise
        if not isinstance(result, result_model):
            raise ContractError(f"{name} returned {type(result).__name__}, not its result {result_model.__name__}")
        return redact(json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True)))

    return asyncio.ensure_future(run())


def call(name: str, params_json: str, emit: Callable[[str], None]) -> asyncio.Task[str]:
    """What the worker calls: :func:`start`, but the task never fails for a method's error. Its result is
    the JSON ``{"result": ...}`` or ``{"error": {code, message, details}}`` (:class:`pycore.contract.
    WireErrorInfo`), so the page gets the code and a clean message instead of a Python traceback.
    ``emit`` gets the events as a JSON array: those made in one step of the event loop cross together."""
    batch = _Batch(emit)

    async def run() -> str:
        try:
            return '{"result": ' + await start(name, params_json, batch.add) + "}"
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - every failure becomes the contract's error
            return json.dumps({"error": describe_error(e)})
        finally:
            batch.flush()

    return asyncio.ensure_future(run())


class _Batch:
    """Each call into JavaScript from Pyodide has a cost of its own, and a fast stream makes dozens of events in
    one step of the event loop (one body read): they go out together, at the end of that step, in order."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self.emit = emit
        self.events: list[str] = []

    def add(self, event: str) -> None:
        if not self.events:
            asyncio.get_running_loop().call_soon(self.flush)
        self.events.append(event)

    def flush(self) -> None:
        if self.events:
            events, self.events = self.events, []
            self.emit("[" + ",".join(events) + "]")


def describe_error(error: BaseException) -> dict[str, Any]:
    """The contract's error for an exception: its code, its message without the class name, details."""
    from pycore.contract import WireErrorInfo, error_code, error_details

    if isinstance(error, WireError):  # redacted already; its message still names the original class
        code, details, message = error.code, error.details, error.message.partition(": ")[2] or error.message
    else:
        code, details, message = error_code(error), error_details(error), str(error) or type(error).__name__
    info = WireErrorInfo.model_validate({"code": code, "message": message, "details": details})
    return info.model_dump(mode="json")
