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
//   {type: "events", id, events}                streamed events of call `id`, in order: a JSON array text
//                                               (the worker gathers them, one message per frame at most)
//   {type: "result", id, result}                call or boot `id` finished
//   {type: "error", id, error: {code, message, details, stage?}}
//                                               call or boot `id` failed: `code` is one of the contract's
//                                               error codes (pycore/contract/, docs/PROTOCOL.md); the
//                                               page branches on it, never on `message`; a boot error
//                                               names its stage
//   {type: "log", level, message}               a log line: level is debug | info | warn | error

export const STAGES = Object.freeze(["runtime", "packages", "core", "ready"]);

/**
 * @typedef {import("./types/contract").Method} Method
 * @typedef {import("./types/contract").CoreEvent} CoreEvent
 * @typedef {import("./types/contract").WireError} WireError
 * @typedef {(event: CoreEvent) => void} EventHandler
 * @typedef {(stage: string, detail: unknown) => void} StageHandler
 * @typedef {(level: string, message: string) => void} LogHandler
 * @typedef {{ base: string, pyodide: string, wheels: string[], later: string[] }} BootParams
 * @typedef {{ resolve: (value: unknown) => void, reject: (reason: Error) => void, onEvent: EventHandler }} Pending
 * @typedef {{ type: "log", level: string, message: string } | { type: "stage", stage: string, detail: unknown }
 *   | { type: "events", id: number, events: string } | { type: "result", id: number, result: unknown }
 *   | { type: "error", id: number, error: WireError & { stage?: string } }} WorkerMessage
 */
/**
 * A request's promise, with the id `cancel` takes (null while a call still waits for the core to be ready).
 * @template T
 * @typedef {Promise<T> & { readonly id: number | null }} Call
 */

/** A page-side client: sends requests, matches replies by id, streams events to a callback. */
export class WorkerClient {
  /**
   * @param {Worker} worker
   * @param {{ onStage?: StageHandler, onLog?: LogHandler }} [handlers]
   */
  constructor(worker, { onStage = () => {}, onLog = () => {} } = {}) {
    this.worker = worker;
    this.nextId = 1;
    /** @type {Map<number, Pending>} */
    this.pending = new Map();
    this.onStage = onStage;
    this.onLog = onLog;
    worker.addEventListener("message", (ev) => this.#receive(ev.data));
    worker.addEventListener("error", (ev) => this.#failAll(ev.message || "the worker failed to start"));
  }

  /**
   * @param {BootParams} params
   * @returns {Call<unknown>}
   */
  boot(params) {
    return this.#request({ type: "boot", ...params });
  }

  /**
   * @template {Method} M
   * @param {M} method
   * @param {import("./types/contract").Params<M>} [params]
   * @param {EventHandler} [onEvent]
   * @returns {Call<import("./types/contract").Result<M>>}
   */
  call(method, params = /** @type {import("./types/contract").Params<M>} */ ({}), onEvent = () => {}) {
    return /** @type {Call<import("./types/contract").Result<M>>} */ (this.#request({ type: "call", method, params }, onEvent));
  }

  /** @param {number} id */
  cancel(id) {
    this.worker.postMessage({ type: "cancel", id });
  }

  /**
   * @param {{ type: string } & Record<string, unknown>} message
   * @param {EventHandler} [onEvent]
   * @returns {Call<unknown>}
   */
  #request(message, onEvent = () => {}) {
    const id = this.nextId++;
    const promise = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject, onEvent }));
    this.worker.postMessage({ ...message, id });
    return Object.assign(promise, { id });
  }

  /** @param {WorkerMessage} msg */
  #receive(msg) {
    if (msg.type === "log") return this.onLog(msg.level, msg.message);
    if (msg.type === "stage") return this.onStage(msg.stage, msg.detail);
    const entry = this.pending.get(msg.id);
    if (!entry) return;
    if (msg.type === "events") {
      // Each event is handled on its own, as if it had come alone: a handler that throws skips no other event.
      for (const event of /** @type {CoreEvent[]} */ (JSON.parse(msg.events))) {
        try {
          entry.onEvent(event);
        } catch (err) {
          reportError(err);
        }
      }
      return;
    }
    this.pending.delete(msg.id);
    if (msg.type === "result") entry.resolve(msg.result);
    else entry.reject(Object.assign(new Error(msg.error.message), msg.error));
  }

  /** @param {string} message */
  #failAll(message) {
    // The worker itself did not load (its script failed): the contract's boot_failed, so every rejection has a code.
    const error = { code: "boot_failed", message, details: {}, stage: "runtime" };
    for (const entry of this.pending.values()) entry.reject(Object.assign(new Error(message), error));
    this.pending.clear();
  }
}
