"""``mcp.doctor {url, origin, headers?, reachable?, mode?}`` → ``{mode, findings: [{code, message, fix}],
relay_hint}``: why the page cannot talk to a server, and how to fix it (:mod:`pycore.mcp.doctor`).

In the browser (Pyodide) the doctor infers from which ``fetch`` requests fail; the page may pass
``reachable`` (the result of its own ``fetch(url, {mode: "no-cors"})``: ``true`` when it resolved,
``false`` when it threw), otherwise the worker makes that request itself. In CPython it reads the
preflight directly. ``mode`` ("browser" / "direct") overrides the choice, for tests.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from pycore.contract.params import DoctorParams
from pycore.contract.results import Diagnosis, Finding
from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.methods._state import WorkerState


async def no_cors_reachable(url: str, timeout: float) -> bool | None:
    """Does ``url`` answer at all (:func:`pycore.http.fetch.no_cors_reachable`)? ``None`` outside a browser."""
    if sys.platform != "emscripten":
        return None
    from pycore.http.fetch import no_cors_reachable as probe

    return await probe(url, timeout)


@method("mcp.doctor", params=DoctorParams, result=Diagnosis)
async def mcp_doctor(params: DoctorParams, emit: Emit, worker: WorkerState) -> Diagnosis:
    from pycore.http import default_transport
    from pycore.mcp.doctor import PROBE_TIMEOUT, diagnose_browser, diagnose_direct

    url, origin = params.url, params.origin
    if not url.startswith(("http://", "https://")):
        raise ValueError("mcp.doctor needs the server's http(s) url")
    if not origin.startswith(("http://", "https://")):
        raise ValueError("mcp.doctor needs the page's origin, e.g. location.origin")
    headers = params.headers
    mode = params.mode or ("browser" if sys.platform == "emscripten" else "direct")
    http = default_transport()
    try:
        if mode == "browser":
            reachable = params.reachable
            if reachable is None:
                reachable = await no_cors_reachable(url, PROBE_TIMEOUT)
            diagnosis = await diagnose_browser(http, url, origin, headers, reachable)
        elif mode == "direct":
            diagnosis = await diagnose_direct(http, url, origin, headers)
        else:
            raise ValueError(f"mode must be browser or direct, not {mode!r}")
    finally:
        await http.aclose()
    return Diagnosis(mode=mode, relay_hint=diagnosis.relay_hint,
                     findings=[Finding(code=f.code, message=f.message, fix=f.fix) for f in diagnosis.findings])
