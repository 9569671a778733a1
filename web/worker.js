// The Web Worker that hosts Python (Pyodide) and the pycore package. The UI thread never waits on
// it: everything arrives as messages (see protocol.js).

import * as bodyPump from "./body_pump.js";
import * as oauthVault from "./oauth_vault.js";
import { AFTER_RESTORE, Snapshots, handlesOf, preload, realGlobals } from "./snapshot.js";
import { extensions } from "./wheel.js";

/**
 * The little of Pyodide this worker uses (the runtime is loaded by URL at boot and brings no types here).
 * @typedef {{ runPython(code: string): unknown, pyimport(name: "pycore.wire"): Wire,
 *   unpackArchive(buffer: ArrayBuffer, format: "wheel", options: { extractDir: string }): void,
 *   registerJsModule(name: string, module: object): void, makeMemorySnapshot(): Uint8Array<ArrayBuffer>,
 *   _module: import("./snapshot.js").EmscriptenModule }} Pyodide
 * @typedef {{ preRun: ((module: import("./snapshot.js").EmscriptenModule) => void)[] }} ModuleSettings
 * @typedef {(settings: ModuleSettings) => Promise<unknown>} CreateModule
 * @typedef {{ indexURL: string, packages: string[], stdout: (line: string) => void, stderr: (line: string) => void,
 *   createPyodideModule?: CreateModule, _makeSnapshot?: boolean, _loadSnapshot?: Uint8Array<ArrayBuffer> }} PyodideOptions
 * @typedef {{ loadPyodide(options: PyodideOptions): Promise<Pyodide> }} PyodideModule
 * @typedef {import("./snapshot.js").Saved} Saved
 * @typedef {import("./snapshot.js").Extension} Extension
 * @typedef {{ info(): string, call(method: string, params: string, emit: (event: string) => void): PyTask }} Wire
 *   pycore.wire as a PyProxy
 * @typedef {Promise<string> & { copy(): PyTask, cancel(): void, destroy(): void }} PyTask
 *   a PyProxy of a Python task: awaiting it consumes it
 * @typedef {import("./protocol.js").BootParams & { type: "boot", id: number }} BootMessage
 * @typedef {{ type: "call", id: number, method: string, params?: unknown }} CallMessage
 * @typedef {BootMessage | CallMessage | { type: "cancel", id: number }} PageMessage
 */

const scope = /** @type {DedicatedWorkerGlobalScope} */ (/** @type {unknown} */ (self));

/** @type {Wire | null} */
let wire = null; // pycore.wire, once the core is up
let installed = Promise.resolve(); // the wheels installed after ready (`later`): calls wait for them
/** @type {Map<number, PyTask>} */
const running = new Map(); // call id -> Python task, for cancel

/** @param {Record<string, unknown>} message */
const post = (message) => scope.postMessage(message);
/**
 * @param {string} level
 * @param {unknown} message
 */
const log = (level, message) => post({ type: "log", level, message: String(message) });

scope.addEventListener("message", (/** @type {MessageEvent<PageMessage>} */ { data: msg }) => {
  if (msg.type === "boot") boot(msg);
  else if (msg.type === "call") call(msg);
  else if (msg.type === "cancel") running.get(msg.id)?.cancel();
});

/** @param {BootMessage} message */
async function boot({ id, base, pyodide: pyodideDir, wheels, later = [] }) {
  let stage = "runtime";
  /**
   * @param {string} next
   * @param {unknown} [detail]
   */
  const enter = (next, detail) => {
    performance.mark(`stage:${next}`); // read by bench/boot
    post({ type: "stage", stage: (stage = next), detail });
  };
  try {
    enter("runtime");
    const indexURL = new URL(pyodideDir, base).href;
    // Fetching the wheels starts now, so they download while the interpreter starts.
    const wheelBytes = wheels.map((w) => fetchBytes(new URL(w, base).href));
    const snapshots = await Snapshots.keyFor(base, [scope.location.pathname, pyodideDir, ...wheels]).then((key) => new Snapshots(key),
                                                                                 () => null);
    const saved = await snapshots?.read().catch((err) => log("warn", `core snapshot unreadable: ${errorMessage(err)}`));
    /** @param {Pyodide} py */
    const install = async (py) => {
      enter("packages", { count: wheels.length });
      const extractDir = /** @type {string} */ (py.runPython("import site; site.getsitepackages()[0]"));
      for (const [i, bytes] of wheelBytes.entries()) {
        py.unpackArchive(await bytes, "wheel", { extractDir });
        post({ type: "stage", stage, detail: { count: wheels.length, done: i + 1 } });
      }
      enter("core");
      return extractDir;
    };
    const extensionsOf = Promise.all(wheelBytes).then((all) => Promise.all(all.map(extensions))).then((e) => e.flat());
    let started = saved ? await warm(indexURL, extensionsOf, saved, install).catch(async (err) => {
      log("warn", `the core snapshot could not be restored, so it is thrown away: ${errorMessage(err)}`);
      await snapshots?.drop();
      return null;
    }) : null;
    started ??= await fresh(indexURL, snapshots ? extensionsOf : null, install);
    const { py, extractDir, info, take } = started;
    enter("ready", info);
    post({ type: "result", id, result: info });
    // Still in this task, so before any call can reach Python: the snapshot, then the page's modules for Python.
    const made = take();
    if (started.recording) realGlobals(py);
    // OAuth tokens outlive a reload in the worker's own encrypted vault, never in the page (SECURITY.md T-A11).
    py.registerJsModule("orizuru_oauth_vault", { ...oauthVault });
    py.registerJsModule("orizuru_body_pump", { ...bodyPump });
    installed = installLater(py, extractDir, later.map((w) => new URL(w, base).href));
    if (made && snapshots) {
      snapshots.store(made).catch((err) => log("warn", `the core snapshot was not kept: ${errorMessage(err)}`));
    }
  } catch (err) {
    post({ type: "error", id, error: { code: "boot_failed", stage, message: errorMessage(err), details: {} } });
  }
}

/**
 * @typedef {(py: Pyodide) => Promise<string>} Install  unpacks the start-up wheels; their folder
 * @typedef {{ py: Pyodide, extractDir: string, info: Record<string, unknown>, take: () => Saved | null,
 *   recording: boolean }} Started
 *   a core started and imported; `take` makes its snapshot, if this boot can, right after ready is posted (the
 *   copy of the memory would only delay it); `recording` when Python's `js` is Pyodide's recording one
 */

/**
 * A boot from scratch. When a snapshot can be kept (`extensions` given), the compiled extensions are loaded before
 * the interpreter starts, and `take` saves the memory as it is after `import pycore.wire`: before any JavaScript
 * module of ours is handed to Python and before the first call.
 * @param {string} indexURL
 * @param {Promise<Extension[]> | null} extensions
 * @param {Install} install
 * @returns {Promise<Started>}
 */
async function fresh(indexURL, extensions, install) {
  let preloaded = Boolean(extensions);
  /** @type {string[]} */
  const loaded = [];
  const py = await startPython(indexURL, extensions, null, (err) => {
    preloaded = false;
    log("warn", `compiled extensions not loaded ahead, so no core snapshot this time: ${errorMessage(err)}`);
  }, loaded);
  const extractDir = await install(py);
  const take = () => {
    try {
      const handles = preloaded ? handlesOf(py._module, loaded) : null;
      return handles && { bytes: py.makeMemorySnapshot(), handles };
    } catch (err) {
      log("warn", `no core snapshot this time: ${errorMessage(err)}`);
      return null;
    }
  };
  return { py, extractDir, info: start(py, "fresh"), take, recording: Boolean(extensions) };
}

/**
 * A boot from a snapshot: the interpreter's memory as it was after `import pycore.wire`. The files are not in
 * it (Pyodide keeps them outside the WebAssembly memory), so the wheels are unpacked again.
 * @param {string} indexURL
 * @param {Promise<Extension[]>} extensions
 * @param {Saved} saved
 * @param {Install} install
 * @returns {Promise<Started>}
 */
async function warm(indexURL, extensions, saved, install) {
  /** @type {unknown} */
  let problem = null;
  const py = await startPython(indexURL, extensions, saved, (err) => { problem = err; });
  if (problem) throw problem;
  const extractDir = await install(py);
  py.runPython(AFTER_RESTORE);
  return { py, extractDir, info: start(py, "snapshot"), take: () => null, recording: false };
}

/**
 * @param {string} indexURL
 * @param {Promise<Extension[]> | null} extensions loaded before the interpreter starts (none: Pyodide as it comes)
 * @param {Saved | null} saved the snapshot to restore
 * @param {(err: unknown) => void} failed
 * @param {string[]} [loaded] given the path of each extension loaded ahead
 */
async function startPython(indexURL, extensions, saved, failed, loaded) {
  const { loadPyodide } = /** @type {PyodideModule} */ (await import(`${indexURL}pyodide.mjs`));
  /** @type {PyodideOptions} */
  const options = { indexURL, packages: [], stdout: (line) => log("info", line), stderr: (line) => log("warn", line) };
  if (extensions) {
    const create = /** @type {{ default: CreateModule }} */ (await import(`${indexURL}pyodide.asm.mjs`)).default;
    options.createPyodideModule = (settings) => {
      settings.preRun.push(preload(extensions, saved, failed, loaded));
      return create(settings);
    };
    if (saved) options._loadSnapshot = saved.bytes;
    else options._makeSnapshot = true;
  }
  return loadPyodide(options);
}

/**
 * The core itself (the page's JavaScript modules for Python come after the snapshot, which must not hold them).
 * @param {Pyodide} py
 * @param {"fresh" | "snapshot"} how
 */
function start(py, how) {
  wire = py.pyimport("pycore.wire");
  return { ...JSON.parse(wire.info()), boot: how };
}

/**
 * The wheels only some methods import (focus memory's jinja2, the MCP client's wire types), fetched and installed
 * once the core is ready. A failure is logged, not thrown: the methods that need them then name the missing module.
 */
/**
 * @param {Pyodide} py
 * @param {string} extractDir
 * @param {string[]} urls
 */
async function installLater(py, extractDir, urls) {
  try {
    const all = await Promise.all(urls.map((url) => fetchBytes(url)));
    for (const bytes of all) py.unpackArchive(bytes, "wheel", { extractDir });
    py.runPython("import importlib; importlib.invalidate_caches()");
  } catch (err) {
    log("error", `could not install ${urls.length} wheels after start-up: ${errorMessage(err)}`);
  }
}

// A call's outcome comes back from pycore.wire.call as {result} or {error: {code, message, details}}
// (pycore/contract/): the page gets a stable code and a clean sentence, never a Python traceback.
/** @param {CallMessage} message */
async function call({ id, method, params }) {
  if (!wire) {
    post({ type: "error", id, error: { code: "not_ready", message: "the core is not ready yet", details: {} } });
    return;
  }
  await installed;
  /** @param {string} events a JSON array of events */
  const emit = (events) => outbox.add(id, events);
  const task = wire.call(method, JSON.stringify(params ?? {}), emit);
  // Awaiting a PyProxy of a task consumes (destroys) it, so Stop keeps its own copy to cancel with.
  const handle = task.copy();
  running.set(id, handle);
  try {
    const outcome = JSON.parse(await task);
    outbox.close(id);
    if (outcome.error) post({ type: "error", id, error: outcome.error });
    else post({ type: "result", id, result: outcome.result });
  } catch (err) {
    // Only a cancelled task (Stop) or a failure of the interpreter itself ends up here.
    outbox.close(id);
    const cancelled = errorFields(err).type === "CancelledError";
    post({ type: "error", id, error: { code: cancelled ? "cancelled" : "internal", message: errorMessage(err),
                                       details: {} } });
  } finally {
    running.delete(id);
    handle.destroy();
  }
}

/**
 * The streamed events not yet posted, per call (issue 36 item 3). Posting costs about as much as making an
 * event, so the events a call made in one turn of the worker's event loop (the asyncio steps one wake of the body
 * pump, web/body_pump.js, set going) go together, as one JSON array text the page parses once. The pump already
 * wakes Python at most once per frame, so no timer of its own here: one held for a frame's time added a frame of
 * latency (p95 56 ms against 49 ms without) and saved no CPU (bench/stream-e2e). A call's result is posted after
 * its last events.
 */
const outbox = {
  /** @type {Map<number, { events: string[], timer: ReturnType<typeof setTimeout> | null }>} */
  calls: new Map(),
  /**
   * @param {number} id
   * @param {string} events a JSON array of events, as pycore.wire emits them
   */
  add(id, events) {
    let call = this.calls.get(id);
    if (!call) this.calls.set(id, (call = { events: [], timer: null }));
    call.events.push(events.slice(1, -1));
    call.timer ??= setTimeout(() => this.flush(id), 0);
  },
  /** @param {number} id */
  flush(id) {
    const call = this.calls.get(id);
    if (!call) return;
    if (call.timer !== null) clearTimeout(call.timer);
    call.timer = null;
    if (call.events.length) post({ type: "events", id, events: `[${call.events.join(",")}]` });
    call.events = [];
  },
  /** @param {number} id the call ended: its last events go now */
  close(id) {
    this.flush(id);
    this.calls.delete(id);
  },
};

/** @param {string} url */
async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

/**
 * @param {unknown} err
 * @returns {{ message?: unknown, type?: unknown }} what a thrown value says of itself
 */
function errorFields(err) {
  return typeof err === "object" && err !== null ? err : {};
}

/** @param {unknown} err */
function errorMessage(err) {
  // Python tracebacks are long; the last line names the error.
  const { message, type } = errorFields(err);
  const text = String(message ?? err);
  const lines = text.trim().split("\n");
  return type ? lines[lines.length - 1] : text;
}
