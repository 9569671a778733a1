"""``python -m pycore replay`` as a user runs it: a real process (CPython only)."""

from __future__ import annotations

import json
import subprocess
import sys

from vendor_fixtures import FIXTURES, ROOT, subset


def test_python_m_pycore_replay_in_a_subprocess() -> None:
    fixture = next(f for f in FIXTURES if f.file == "anthropic/stream-thinking-signature.sse")
    cmd = [sys.executable, "-m", "pycore", "replay", "--vendor", "anthropic", "--chunk-size", "3", str(fixture.path)]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    expected = fixture.expected()
    assert subset(json.loads(result.stdout), expected) == expected


def test_help_lists_the_replay_command() -> None:
    result = subprocess.run([sys.executable, "-m", "pycore", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0 and "replay" in result.stdout
