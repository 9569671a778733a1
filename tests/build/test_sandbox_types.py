"""The code interpreter's page side (web/sandbox/) type-checks under TypeScript's strict mode (issue 30).

Its messages cross three contexts (the page, the sandboxed frame, the worker) that share no code, so their
shapes are declared once in web/sandbox/messages.js and every file is checked against them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TSC = ROOT / "node_modules" / ".bin" / "tsc"
STRICT = ["--noEmit", "--allowJs", "--checkJs", "--strict", "--target", "es2022", "--module", "esnext",
          "--moduleResolution", "bundler", "--lib", "es2023,dom,dom.iterable", "--skipLibCheck"]


def test_the_sandbox_scripts_type_check_with_zero_errors() -> None:
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "web" / "sandbox").glob("*.js"))
    assert "web/sandbox/worker.js" in files and "web/sandbox/messages.js" in files
    result = subprocess.run([str(TSC), *STRICT, *files], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
