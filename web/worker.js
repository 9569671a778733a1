// The Web Worker that hosts Python (Pyodide) and the pycore package. The UI thread never waits on
// it: everything arrives as messages (see protocol.js).

import * as oauthVault from "./oauth_vault.js";

let wire = null; // pycore.wire, once the core is up
let installed = Promise.resolve(); // the wheels installed after ready (`later`): calls wait for them
const running = new Map(); // call id -> Python task, for cancel

const post = (message) => self.postMessage(message);
const log = (level, message) => post({ type: "log", level, message: String(message) });

self.addEventListener("message", ({ data: msg }) => {
  if (msg.type === "boot") boot(msg);
  else if (msg.type === "call") call(msg);
  else if (msg.type === "cancel") running.get(msg.id)?.cancel();
});

async function boot({ id, base, pyodide: pyodideDir, wheels, later = [] }) {
  let stage = "runtime";
  const enter = (next, detail) => {
    performance.mark(`stage:${next}`); // read by bench/boot
    post({ type: "stage", stage: (stage = next), detail });
  };
  try {
    enter("runtime");
    const indexURL = new URL(pyodideDir, base).href;
    // Fetching the wheels starts now, so they download while the interpreter starts.
    const wheelBytes = wheels.map((w) => fetchBytes(new URL(w, base).href));
    const { loadPyodide } = await import(`${indexURL}pyodide.mjs`);
    const py = await loadPyodide({
      indexURL,
      packages: [],
      stdout: (line) => log("info", line),
      stderr: (line) => log("warn", line),
    });
    enter("packages", { count: wheels.length });
    const extractDir = py.runPython("import site; site.getsitepackages()[0]");
    for (const [i, bytes] of wheelBytes.entries()) {
      py.unpackArchive(await bytes, "wheel", { extractDir });
      post({ type: "stage", stage, detail: { count: wheels.length, done: i + 1 } });
    }
    enter("core");
    // OAuth tokens outlive a reload in the worker's own encrypted vault, never in the page (SECURITY.md T-A11).
    py.registerJsModule("orizuru_oauth_vault", { ...oauthVault });
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
async function call({ id, method, params }) {
  if (!wire) {
    post({ type: "error", id, error: { code: "not_ready", message: "the core is not ready yet", details: {} } });
    return;
  }
  await installed;
  const emit = (event) => post({ type: "event", id, event: JSON.parse(event) });
  const task = wire.call(method, JSON.stringify(params ?? {}), emit);
  // Awaiting a PyProxy of a task consumes (destroys) it, so Stop keeps its own copy to cancel with.
  const handle = task.copy();
  running.set(id, handle);
  try {
    const outcome = JSON.parse(await task);
    if (outcome.error) post({ type: "error", id, error: outcome.error });
    else post({ type: "result", id, result: outcome.result });
  } catch (err) {
    // Only a cancelled task (Stop) or a failure of the interpreter itself ends up here.
    const cancelled = err?.type === "CancelledError";
    post({ type: "error", id, error: { code: cancelled ? "cancelled" : "internal", message: errorMessage(err),
                                       details: {} } });
  } finally {
    running.delete(id);
    handle.destroy();
  }
}

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

function errorMessage(err) {
  // Python tracebacks are long; the last line names the error.
  const text = String(err?.message ?? err);
  const lines = text.trim().split("\n");
  return err?.type ? lines[lines.length - 1] : text;
}
