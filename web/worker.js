// The Web Worker that hosts Python (Pyodide) and the pycore package. The UI thread never waits on
// it: everything arrives as messages (see protocol.js).

let wire = null; // pycore.wire, once the core is up
const running = new Map(); // call id -> Python task, for cancel

const post = (message) => self.postMessage(message);
const log = (level, message) => post({ type: "log", level, message: String(message) });

self.addEventListener("message", ({ data: msg }) => {
  if (msg.type === "boot") boot(msg);
  else if (msg.type === "call") call(msg);
  else if (msg.type === "cancel") running.get(msg.id)?.cancel();
});

async function boot({ id, base, pyodide: pyodideDir, wheels }) {
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
    wire = py.pyimport("pycore.wire");
    const info = JSON.parse(wire.info());
    enter("ready", info);
    post({ type: "result", id, result: info });
  } catch (err) {
    post({ type: "error", id, error: { stage, message: errorMessage(err) } });
  }
}

async function call({ id, method, params }) {
  if (!wire) {
    post({ type: "error", id, error: { kind: "not_ready", message: "the core is not ready yet" } });
    return;
  }
  const emit = (event) => post({ type: "event", id, event: JSON.parse(event) });
  let task;
  try {
    task = wire.start(method, JSON.stringify(params ?? {}), emit);
  } catch (err) {
    post({ type: "error", id, error: { kind: err.type ?? "error", message: errorMessage(err) } });
    return;
  }
  // Awaiting a PyProxy of a task consumes (destroys) it, so Stop keeps its own copy to cancel with.
  const handle = task.copy();
  running.set(id, handle);
  try {
    post({ type: "result", id, result: JSON.parse(await task) });
  } catch (err) {
    post({ type: "error", id, error: { kind: err.type ?? "error", message: errorMessage(err) } });
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
