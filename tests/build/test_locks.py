"""The Python lock is complete and consistent, so set-up can install it without resolving anything.

``build.py`` installs ``requirements.lock`` with ``--no-deps``: nothing outside the lock can be picked,
whatever the index holds. That is only safe while every dependency of every locked package (extras
included, for this machine's markers) is itself locked at a version that satisfies it. This test
proves it from the lock's text and the metadata of the installed distributions, and names the
missing or wrong pin otherwise.
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def locked(text: str) -> dict[str, tuple[str, str | None]]:
    """{canonical name: (version, marker or None)} for every pin in a pip-compile/uv lock file."""
    pins = {}
    for line in text.splitlines():
        match = PIN.match(line)
        if match:
            name, version, marker = match.groups()
            pins[canonicalize_name(name)] = (version, marker)
    return pins


def roots(pyproject: dict) -> list[Requirement]:
    """What set-up asks for: the project's dependencies and those of every extra it installs."""
    project = pyproject["project"]
    extras = project.get("optional-dependencies", {})
    return [Requirement(r) for r in [*project["dependencies"], *(r for group in extras.values() for r in group)]]


def applies(req: Requirement, extra: str = "") -> bool:
    return req.marker is None or req.marker.evaluate({**default_environment(), "extra": extra})


def lock_problems(pins: dict[str, tuple[str, str | None]], wanted: list[Requirement]) -> list[str]:
    """Every dependency reached from ``wanted`` that the lock does not pin at a satisfying version,
    and every pin nothing reaches. A locked package's own dependencies come from its installed metadata."""
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    reached: set[str] = set()
    queue: list[tuple[Requirement, str]] = [(r, "pyproject.toml") for r in wanted if applies(r)]
    while queue:
        req, by = queue.pop()
        name = canonicalize_name(req.name)
        reached.add(name)
        if name not in pins:
            problems.append(f"{by} requires {req}, which requirements.lock does not pin")
            continue
        version = pins[name][0]
        if not req.specifier.contains(version, prereleases=True):
            problems.append(f"{by} requires {req}, but requirements.lock pins {name}=={version}")
        for extra in ["", *sorted(req.extras)]:
            if (name, extra) in seen:
                continue
            seen.add((name, extra))
            try:
                dist = metadata.distribution(name)
            except metadata.PackageNotFoundError:
                problems.append(f"{name}=={version} is locked but not installed in .venv: run `python3 build.py test`")
                break
            if dist.version != version:
                problems.append(f".venv has {name} {dist.version} but requirements.lock pins {version}")
            label = f"{name} {version}" + (f" (extra {extra})" if extra else "")
            for dep in map(Requirement, dist.requires or []):
                if applies(dep, extra) and (not extra or not applies(dep)):
                    queue.append((dep, label))
    for name, (version, marker) in sorted(pins.items()):
        if name not in reached and (marker is None or Requirement(f"x; {marker}").marker.evaluate()):
            problems.append(f"requirements.lock pins {name}=={version}, which nothing requires")
    return problems


def test_the_python_lock_pins_every_dependency_at_a_satisfying_version():
    pins = locked((ROOT / "requirements.lock").read_text())
    wanted = roots(tomllib.loads((ROOT / "pyproject.toml").read_text()))
    problems = lock_problems(pins, wanted)
    assert not problems, "requirements.lock is incomplete or inconsistent:\n" + "\n".join(problems)


def test_a_deleted_pin_is_named(monkeypatch):
    """The check above can fail: without the pin of an extras dependency, it names what needs it."""
    text = (ROOT / "requirements.lock").read_text()
    pins = locked(text)
    assert "requests" in pins  # reached only through google-auth[requests]
    del pins["requests"]
    problems = lock_problems(pins, roots(tomllib.loads((ROOT / "pyproject.toml").read_text())))
    assert any(re.fullmatch(r"google-auth [\d.]+ \(extra requests\) requires requests.* which requirements.lock "
                            r"does not pin", p) for p in problems), problems


def test_a_pin_outside_the_range_is_named():
    pins = locked((ROOT / "requirements.lock").read_text())
    pins["pydantic-core"] = ("0.0.1", None)
    problems = lock_problems(pins, roots(tomllib.loads((ROOT / "pyproject.toml").read_text())))
    assert any("requires pydantic-core" in p and "pins pydantic-core==0.0.1" in p for p in problems), problems


def test_set_up_installs_the_lock_without_resolving(tmp_path, monkeypatch):
    import build  # the repository root is on sys.path (pyproject: pythonpath)

    calls: list[list[str]] = []
    monkeypatch.setattr(build, "VENV", tmp_path)
    monkeypatch.setattr(build, "venv_python", lambda: Path(sys.executable))
    monkeypatch.setattr(build, "run", lambda cmd, **kw: calls.append([str(c) for c in cmd]))
    build.ensure_venv()
    install = next(c for c in calls if "requirements.lock" in c)
    assert {"--require-hashes", "--no-deps"} <= set(install), install
