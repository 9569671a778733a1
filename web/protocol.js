// The page <-> worker protocol, JavaScript side. Its Python half is pycore/wire.py; the two files
// document the same messages and change together.
//
// Every message is a plain object with a `type`. Requests carry an `id` chosen by the page; every
// reply to a request carries the same `id`. Logs travel on their own type, never inside replies.
//
// page -> worker
//   {type: "boot", id, base, pyodide, wheels, later}
//                                               start Python: `pyodide` is the folder of the Pyodide
//                                               runtime, `wheels` the wheels to install before ready,
//                                               `later` those installed right after (calls wait for
//                                               them), all relative to `base` (the page's URL)
//   {type: "call", id, method, params}          call a pycore method (pycore/wire.py METHODS)
//   {type: "cancel", id}                        cancel the call `id` (Stop)
//
// worker -> page
//   {type: "stage", stage, detail}              boot progress, one of STAGES, in order
//   {type: "event", id, event}                  one streamed event of call `id`
//   {type: "result", id, result}                call or boot `id` finished
//   {type: "error", id, error: {code, message, details, stage?}}
//                                               call or boot `id` failed: `code` is one of the contract's
//                                               error codes (pycore/contract/, docs/PROTOCOL.md); the
//                                               page branches on it, never on `message`; a boot error
//                                               names its stage
//   {type: "log", level, message}               a log line: level is debug | info | warn | error

export const STAGES = Object.freeze(["runtime", "packages", "core", "ready"]);

/** A page-side client: sends requests, matches replies by id, streams events to a callback. */
export class WorkerClient {
  constructor(worker, { onStage = () => {}, onLog = () => {} } = {}) {
    this.worker = worker;
    this.nextId = 1;
    this.pending = new Map();
    this.onStage = onStage;
    this.onLog = onLog;
    worker.addEventListener("message", (ev) => this.#receive(ev.data));
    worker.addEventListener("error", (ev) => this.#failAll(ev.message || "the worker failed to start"));
  }

  boot(params) {
    return this.#request({ type: "boot", ...params });
  }

  call(method, params = {}, onEvent = () => {}) {
    return this.#request({ type: "call", method, params }, onEvent);
  }

  cancel(id) {
    this.worker.postMessage({ type: "cancel", id });
  }

  #request(message, onEvent = () => {}) {
    const id = this.nextId++;
    const promise = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject, onEvent }));
    promise.id = id;
    this.worker.postMessage({ ...message, id });
    return promise;
  }

  #receive(msg) {
    if (msg.type === "log") return this.onLog(msg.level, msg.message);
    if (msg.type === "stage") return this.onStage(msg.stage, msg.detail);
    const entry = this.pending.get(msg.id);
    if (!entry) return;
    if (msg.type === "event") return entry.onEvent(msg.event);
    this.pending.delete(msg.id);
    if (msg.type === "result") entry.resolve(msg.result);
    else entry.reject(Object.assign(new Error(msg.error.message), msg.error));
  }

  #failAll(message) {
    // The worker itself did not load (its script failed): the contract's boot_failed, so every rejection has a code.
    const error = { code: "boot_failed", message, details: {}, stage: "runtime" };
    for (const entry of this.pending.values()) entry.reject(Object.assign(new Error(message), error));
    this.pending.clear();
  }
}
