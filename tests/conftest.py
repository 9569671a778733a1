"""Suite-wide settings. Also loaded inside Pyodide (tests/pyodide), so it imports only what both have.

``async def`` tests need no marker: they run under ``asyncio.run`` in CPython and on Pyodide's own
event loop (through JavaScript Promise Integration) inside Pyodide.
"""

import asyncio
import inspect
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, settings

IN_PYODIDE = sys.platform == "emscripten"

# Pyodide runs several times slower than CPython and has no writable home for an example database.
settings.register_profile(
    "pyodide", deadline=None, database=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("default", deadline=None)
settings.load_profile("pyodide" if IN_PYODIDE else os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_ignore_collect(collection_path, config) -> bool | None:
    """Inside Pyodide, skip test modules with no ``pyodide``-marked test: importing them would pull in
    what only CPython has (httpx, sockets, subprocesses) just for the marker filter to drop them."""
    if IN_PYODIDE and collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return "mark.pyodide" not in collection_path.read_text(encoding="utf-8")
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    kwargs = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    coro = pyfuncitem.obj(**kwargs)
    if IN_PYODIDE:
        from pyodide.ffi import run_sync

        run_sync(coro)
    elif _loop_running():
        # Something (Playwright's sync API) keeps a loop running in this thread: use a fresh thread.
        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, coro).result()
    else:
        asyncio.run(coro)
    return True


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
