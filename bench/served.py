"""What the browser benchmarks share: the site served by the relay on loopback, as a user's would be."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def arguments(doc: str | None, *, runs: int) -> argparse.ArgumentParser:
    """A benchmark's command line: its docstring as the help, how many ``--runs``, and the built site (``--dist``)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=runs)
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    return parser


def serve(site: Path) -> tuple[subprocess.Popen[str], str]:
    """The relay serving ``site`` (a built dist/) on a free loopback port; its process and the site's URL."""
    proc = subprocess.Popen([sys.executable, "-m", "server", "--dist", str(site), "--port", "0"],
                            cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    match = re.search(r"(http://\S+?/)#", proc.stdout.readline())
    assert match, "the relay did not print its URL"
    return proc, match.group(1)
