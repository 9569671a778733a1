// Runs pytest inside real Pyodide under Node, on the wheels the site ships (dist/), the sandbox's Python
// (sandbox_py/, as the zip the site ships), plus the test-only wheels of web/pyodide-wheels.lock.json (from
// .cache/downloads). The repository is
// mounted at /repo, so tests find their fixtures (tests/fixtures) as they do in CPython.
//
//   node tests/pyodide/run_pytest.mjs DIST REPO [pytest args...]
// Exit status: pytest's.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [dist, repo, ...pytestArgs] = process.argv.slice(2);
const boot = JSON.parse(
  fs.readFileSync(path.join(dist, "index.html"), "utf8").match(/<script type="application\/json" id="boot">(.*?)<\/script>/s)[1],
);
const lock = JSON.parse(fs.readFileSync(path.join(repo, "web", "pyodide-wheels.lock.json"), "utf8"));
const testWheels = lock.packages
  .filter((p) => p.purpose === "test")
  .map((p) => path.join(repo, ".cache", "downloads", p.file));

const { loadPyodide } = await import(pathToFileURL(path.resolve(dist, boot.pyodide, "pyodide.mjs")).href);
const py = await loadPyodide({ packages: [], env: { HOME: "/home/pyodide" } });
const sitePackages = py.runPython("import site; site.getsitepackages()[0]");
for (const wheel of [...boot.wheels, ...(boot.later ?? [])].map((w) => path.join(dist, w)).concat(testWheels)) {
  py.unpackArchive(new Uint8Array(fs.readFileSync(wheel)), "wheel", { extractDir: sitePackages });
}
py.unpackArchive(new Uint8Array(fs.readFileSync(path.join(dist, boot.sandbox.python))), "zip", { extractDir: sitePackages });
// The streamed body's pump, as web/worker.js registers it (pycore/http/fetch.py reads through it when present).
py.registerJsModule("orizuru_body_pump", { ...(await import(pathToFileURL(path.join(repo, "web", "body_pump.js")).href)) });
py.FS.mkdirTree("/repo");
py.mountNodeFS("/repo", fs.realpathSync(repo));
py.globals.set("pytest_args", py.toPy(pytestArgs));
const code = await py.runPythonAsync(`
import os, site, sys
# The source tree is mounted for the tests only: pycore and sandbox_py must come from what the site ships.
sys.path[:] = [p for p in sys.path if p not in ("", ".")]
os.chdir("/repo")
import pytest, pycore, sandbox_py
for shipped in (pycore, sandbox_py):
    assert shipped.__file__.startswith(site.getsitepackages()[0]), shipped.__file__
print(f"pycore {pycore.__version__} from {pycore.__file__} on Python {sys.version.split()[0]} ({sys.platform})")
int(pytest.main(["-p", "no:cacheprovider", "-o", "pythonpath=", *pytest_args]))
`);
process.exit(code);
