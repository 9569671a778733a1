"""docs/ARCHITECTURE.md names the files a reply and a tool call cross: each must exist, so the page stays true."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
# A path in backticks: a known top folder, then a file with an extension or a folder ending in a slash.
PATH = re.compile(r"`((?:pycore|sandbox_py|web|server|tests|docs)/[\w./-]*)`")


def named_paths(text: str) -> list[str]:
    return sorted(set(PATH.findall(text)))


def test_the_architecture_page_names_files_and_every_one_exists() -> None:
    named = named_paths(DOC.read_text(encoding="utf-8"))
    assert len(named) > 40, f"the page names too few files to describe the way through: {named}"
    missing = [path for path in named if not (ROOT / path).exists()]
    assert not missing, f"docs/ARCHITECTURE.md names files that are not in the tree: {missing}"


def test_a_missing_file_is_caught() -> None:
    assert named_paths("see `web/app/chat.js`, `pycore/nowhere.py` and `sandbox_py/gone.py`, not `README`") == [
        "pycore/nowhere.py", "sandbox_py/gone.py", "web/app/chat.js"]
    assert not (ROOT / "pycore/nowhere.py").exists()
