// The Web Worker that hosts Python (Pyodide) and the pycore package. The UI thread never waits on
// it: everything arrives as messages (see protocol.js).

import * as bodyPump from "./body_pump.js";
import * as oauthVault from "./oauth_vault.js";

/**
 * The little of Pyodide this worker uses (the runtime is loaded by URL at boot and brings no types here).
 * @typedef {{ runPython(code: string): unknown, pyimport(name: "pycore.wire"): Wire,
 *   unpackArchive(buffer: ArrayBuffer, format: "wheel", options: { extractDir: string }): void,
 *   registerJsModule(name: string, module: object): void }} Pyodide
 * @typedef {{ loadPyodide(options: { indexURL: string, packages: string[], stdout: (line: string) => void,
 *   stderr: (line: string) => void }): Promise<Pyodide> }} PyodideModule
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
    const { loadPyodide } = /** @type {PyodideModule} */ (await import(`${indexURL}pyodide.mjs`));
    const py = await loadPyodide({
      indexURL,
      packages: [],
      stdout: (line) => log("info", line),
      stderr: (line) => log("warn", line),
    });
    enter("packages", { count: wheels.length });
    const extractDir = /** @type {string} */ (py.runPython("import site; site.getsitepackages()[0]"));
    for (const [i, bytes] of wheelBytes.entries()) {
      py.unpackArchive(await bytes, "wheel", { extractDir });
      post({ type: "stage", stage, detail: { count: wheels.length, done: i + 1 } });
    }
    enter("core");
    // OAuth tokens outlive a reload in the worker's own encrypted vault, never in the page (SECURITY.md T-A11).
    py.registerJsModule("orizuru_oauth_vault", { ...oauthVault });
    py.registerJsModule("orizuru_body_pump", { ...bodyPump });
    wire = py.pyimport("pycore.wire");
    const info = JSON.parse(wire.info());
    enter("ready", info);
    post({ type: "result", id, result: info });
    installed = installLater(py, extractDir, later.map((w) => new URL(w, base).href));
  } catch (err) {
    post({ type: "error", id, error: { code: "boot_failed", stage, message: errorMessage(err), details: {} } });
  }
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
