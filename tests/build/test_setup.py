"""build.py's set-up on a busy or broken machine: it waits for apt's lock, and a failing step says what to do."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import build

LOCKED = "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)"


def fake_apt_get(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, locked_runs: int, then: int = 0) -> Path:
    """An apt-get on PATH that reports apt's lock as held for its first ``locked_runs`` runs, then
    exits with ``then``; every run's arguments are appended to the returned log."""
    bin_dir, log, count = tmp_path / "bin", tmp_path / "calls.log", tmp_path / "count"
    bin_dir.mkdir()
    script = bin_dir / "apt-get"
    script.write_text(f"""#!/bin/sh
echo "$@" >> {log}
n=$(cat {count} 2>/dev/null || echo 0); echo $((n + 1)) > {count}
if [ "$n" -lt {locked_runs} ]; then echo "{LOCKED}" >&2; exit 100; fi
if [ {then} -ne 0 ]; then echo "E: Unable to locate package chromium" >&2; fi
exit {then}
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(build, "APT_LOCK_RETRY", 0.01)
    return log


def test_apt_waits_while_another_process_holds_its_lock(tmp_path, monkeypatch):
    log = fake_apt_get(tmp_path, monkeypatch, locked_runs=3)
    build.apt_install("chromium")
    calls = log.read_text().splitlines()
    assert len(calls) == 5  # update: three locked runs, then done; install: done
    assert calls[-1].endswith("install -y -qq chromium") and "update" in calls[0]


def test_apt_gives_up_on_a_lock_held_too_long_and_says_what_to_do(tmp_path, monkeypatch):
    fake_apt_get(tmp_path, monkeypatch, locked_runs=10**6)
    monkeypatch.setattr(build, "APT_LOCK_WAIT", 0.05)
    with pytest.raises(build.BuildError) as err:
        build.apt_install("chromium")
    assert "apt stayed locked" in str(err.value)
    assert "what to do: install it yourself (`sudo apt-get install chromium`)" in str(err.value)


def test_a_failing_apt_step_names_its_error_and_what_to_do(tmp_path, monkeypatch):
    fake_apt_get(tmp_path, monkeypatch, locked_runs=0, then=100)
    with pytest.raises(build.BuildError) as err:
        build.apt_install("chromium")
    assert "E: Unable to locate package chromium" in str(err.value)
    assert "what to do:" in str(err.value)


def test_a_failing_command_says_what_to_do():
    with pytest.raises(build.BuildError, match=r"command failed \(3\): sh -c exit 3\n  what to do: rerun it"):
        build.run(["sh", "-c", "exit 3"], hint="rerun it")
