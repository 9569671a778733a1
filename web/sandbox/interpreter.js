/**
 * The code interpreter: Python the model writes, run in sandboxes of its own, apart from the core's worker.
 *
 * A sandbox is an <iframe sandbox="allow-scripts" srcdoc> (an opaque origin: none of the page's storage, DOM,
 * keys or core state is in its reach, and it cannot navigate or open the page), whose own policy adds
 * `connect-src blob:` to the page's: it can fetch nothing but the blobs it makes. In it, a worker runs Pyodide
 * from the files the page hands over (the site's own copy). frame.js and worker.js say more.
 *
 * Each conversation gets a sandbox of its own (its notebook: its variables, its files under /mnt/data), and the
 * user's own Python tools another, so nothing of one is reachable or replaceable from another's code. Requests
 * and answers go over a MessageChannel whose port the worker's own script takes before any Python runs; the
 * frame passes nothing between the page and the worker, so code cannot answer in the host's place.
 * At most `maxNotebooks` conversations keep a sandbox (the least recently used idle one is closed for a new one),
 * and a conversation left for `leftMs` loses its own; its next run starts a fresh notebook and says so.
 *
 *   const interpreter = new Interpreter({pyodide, frameScript, workerScript, python, wheels, toolWheels,
 *        maxNotebooks, leftMs})   URLs of the site's files (python: the sandbox's own Python, sandbox_py/ as a
 *        zip; toolWheels: pydantic's and pycore's, for the user's Python tools)
 *   interpreter.configure({indexes: [url], pyodide: url | null})   the package hosts the user turned on (none by
 *        default: the standard library only); a change ends the sandboxes, whose policy names the hosts
 *   await interpreter.run(session, code, {files, timeoutMs, signal, tools, onToolCall})
 *        -> {stdout, stderr, value, error, notice?, outputs: [{name, mime_type, data: base64}], duration_ms,
 *            restarted?}
 *        `tools` (code mode, web/sandbox/code_mode.js): what the code's `orizuru.tools` may call during this run;
 *        each call it makes goes to `onToolCall({server, tool, arguments})`, whose answer ({result} | {denied} |
 *        {error}) goes back to the code. A call that comes when no run is going is refused here. The time the code
 *        waits for its calls (the user deciding, the server working) does not count against `timeoutMs`.
 *        `session` names a notebook (a conversation): its variables persist between runs until reset(). A run
 *        past `timeoutMs` or stopped through `signal` ends that notebook's sandbox (a worker cannot be
 *        interrupted without cross-origin isolation, which a static host cannot promise): the result says so.
 *        A run in a notebook that was closed (to make room, or after it was left) has `restarted: "closed"` and
 *        a `notice` saying its variables are gone.
 *   interpreter.warm(session)    starts that notebook's sandbox now (a turn that may use it has begun)
 *   interpreter.shown(session)   the conversation on screen: the others' notebooks close after `leftMs`
 *
 * The user's own Python tools (Tools → Python tools) run in a sandbox of their own, each set in a namespace of its
 * own (pycore.agent.python_tools makes their schemas and checks the model's arguments, as it would in CPython):
 *   await interpreter.defineTools(set, source) -> [{name, description, inputSchema}]   throws InterpreterError
 *        naming the source's line on a problem; empty source forgets the set
 *   interpreter.useTools(set, source)   remembers a set without starting the sandbox (definitions kept from an
 *        earlier visit): it is defined in the sandbox at its first call
 *   await interpreter.callTool(set, name, arguments, {callId, timeoutMs, signal})
 *        -> {content, is_error, structured_content}   a run past the limit or stopped ends the tools' sandbox
 *   interpreter.reset(session)   ends that notebook's sandbox;   interpreter.stop()   ends them all
 *   interpreter.sandboxes -> number of sandboxes up or starting
 */

import { hostsOf } from "./hosts.js";
import { toBase64 } from "../files/base64.js";

/** @typedef {import("./messages.js").PackageHosts} PackageHosts */
/** @typedef {import("./messages.js").BootFiles} BootFiles */
/** @typedef {import("./messages.js").DataFile} DataFile */
/** @typedef {import("./messages.js").PageRequest} PageRequest */
/** @typedef {import("./messages.js").Result} Result */
/** @typedef {import("./messages.js").CellResult} CellResult */
/** @typedef {import("./messages.js").CallResult} CallResult */
/** @typedef {import("./messages.js").ToolDefinition} ToolDefinition */
/** @typedef {"timeout" | "stopped" | "restarted"} Ended   why a request got no answer: its sandbox ended */
/** @typedef {{result: Result, ended?: undefined} | {ended: Ended, result?: undefined}} Reply */
/**
 * @typedef {{result: unknown} | {denied: string} | {error: string}} ToolAnswer   what the code's tool call gets
 * @typedef {(request: {server: string, tool: string, arguments: Record<string, unknown>}) => Promise<ToolAnswer>}
 *   ToolCaller   code mode: the page's side of a call the code makes (web/app/code_calls.js)
 */
/**
 * @typedef {object} OutputFile   a file a run wrote, as the tool's result carries it
 * @property {string} name
 * @property {string} mime_type
 * @property {string} data   base64
 * @property {string} [drawn_from]   a PNG drawn here from the SVG of that name
 */
/**
 * @typedef {object} RunResult   what a run gives the model and the card
 * @property {string} stdout
 * @property {string} stderr
 * @property {string | null} value
 * @property {string | null | undefined} error
 * @property {OutputFile[]} outputs
 * @property {number} duration_ms
 * @property {Ended | "memory" | "closed"} [restarted]
 * @property {string} [notice]
 */
/**
 * @typedef {object} Options   the site's files (URLs) and the limits
 * @property {string} pyodide   Pyodide's folder
 * @property {string} frameScript
 * @property {string} workerScript
 * @property {string} python   sandbox_py/ as a zip
 * @property {string[]} [wheels]   micropip's
 * @property {string[]} [toolWheels]   pydantic's and pycore's, for the user's Python tools
 * @property {number} [maxNotebooks]
 * @property {number} [leftMs]
 */

export const DEFAULT_TIMEOUT_MS = 60_000;
const TOOL_HOST_TIMEOUT_MS = 120_000; // loading pydantic and pycore into a new sandbox
export const MEMORY_CEILING = 1.5 * 1024 ** 3; // bytes of Python heap after a run before the sandbox is renewed
export const MAX_NOTEBOOKS = 3; // conversations with a sandbox up at once (each is a Pyodide: see the README)
export const LEFT_MS = 10 * 60_000; // a notebook of a conversation not on screen for this long is closed
const MAX_OUTPUT_BYTES = 20 * 1024 * 1024;
const CLOSED_NOTICE = "The notebook was restarted before this run (its sandbox had been closed to free memory: " +
  "too many conversations had one, or this one was left for a while): variables from earlier runs are gone; " +
  "the conversation's files are in /mnt/data again.";

export class InterpreterError extends Error {}

export class Interpreter {
  /** @type {Map<string, Sandbox>} session -> Sandbox, the least recently used first */
  #notebooks = new Map();
  /** @type {Set<string>} sessions whose notebook was closed after it ran: their next run says so */
  #closed = new Set();
  /** @type {Map<string, ReturnType<typeof setTimeout>>} session -> the timer that closes its notebook off screen */
  #leaving = new Map();
  /** @type {string | null} */
  #shown = null;
  /** @type {Sandbox | null} the Sandbox of the user's Python tools */
  #tools = null;
  /** @type {Map<string, string>} set id -> source: the user's Python tool sets, defined again in each new sandbox */
  #toolSources = new Map();
  /** @type {Map<string, Promise<ToolDefinition[]>>} set id -> its definition in the tools' running sandbox */
  #defined = new Map();
  /** @type {Promise<ArrayBuffer[]> | null} pydantic's and pycore's wheels, fetched once */
  #toolWheels = null;
  /** @type {Promise<void> | null} the tools' running sandbox has loaded them */
  #hosting = null;

  /** @param {Options} options */
  constructor({ pyodide, frameScript, workerScript, python, wheels = [], toolWheels = [],
                maxNotebooks = MAX_NOTEBOOKS, leftMs = LEFT_MS }) {
    this.pyodide = pyodide;
    this.frameScript = frameScript;
    this.workerScript = workerScript;
    this.python = python;
    this.wheels = wheels;
    this.toolWheelURLs = toolWheels;
    this.maxNotebooks = maxNotebooks;
    this.leftMs = leftMs;
    /** @type {PackageHosts} */
    this.packages = { indexes: [], pyodide: null };
    /** @type {{directive: string, blocked: string}[]} what the sandboxes' policy blocked */
    this.refused = [];
  }

  get sandboxes() {
    return this.#notebooks.size + (this.#tools ? 1 : 0);
  }

  /**
   * @param {string} session
   * @param {string} code
   * @param {{files?: DataFile[], timeoutMs?: number, signal?: AbortSignal | null,
   *          tools?: import("./code_mode.js").Entry[], onToolCall?: ToolCaller | null}} [options]
   * @returns {Promise<RunResult>}
   */
  async run(session, code, { files = [], timeoutMs = DEFAULT_TIMEOUT_MS, signal = null, tools = [],
                             onToolCall = null } = {}) {
    const started = performance.now();
    const sandbox = this.#notebook(session);
    const closed = this.#closed.delete(session);
    const copies = files.map(({ name, data }) => ({ name, data: data.slice(0) })); // transferred: the caller keeps its own
    sandbox.onToolCall = onToolCall;
    let reply;
    try {
      reply = await sandbox.request({ type: "run", code, files: copies, tools },
                                    { timeoutMs, signal, transfer: copies.map((f) => f.data) });
    } finally {
      if (sandbox.onToolCall === onToolCall) sandbox.onToolCall = null; // a call after the run is refused
    }
    sandbox.ran = true;
    const duration_ms = Math.round(performance.now() - started);
    /** @type {RunResult} */
    let result;
    let memory = 0;
    if (reply.ended) result = stopped(reply.ended, duration_ms, timeoutMs);
    else {
      const { memory: used, outputs, ...cell } = /** @type {CellResult} */ (reply.result); // the answer to a run
      memory = used ?? 0;
      result = { ...cell, duration_ms, outputs: await describeOutputs(outputs ?? []) };
    }
    if (memory > MEMORY_CEILING) {
      sandbox.stop();
      result.restarted = "memory";
      result.error = `${result.error ? `${result.error}\n` : ""}The interpreter used ${gb(memory)} of memory ` +
        `(the ceiling is ${gb(MEMORY_CEILING)}), so it was restarted: variables are gone.`;
    }
    if (closed) Object.assign(result, { restarted: result.restarted ?? "closed", notice: CLOSED_NOTICE });
    return result;
  }

  /**
   * The session's sandbox, the most recently used now; a new one may close the least recently used idle one.
   * @param {string} session
   */
  #notebook(session) {
    let sandbox = this.#notebooks.get(session);
    this.#notebooks.delete(session);
    if (!sandbox) {
      const made = (sandbox = new Sandbox(this));
      made.onStop = () => {
        if (this.#notebooks.get(session) === made) this.#notebooks.delete(session);
      };
    }
    this.#notebooks.set(session, sandbox);
    for (const [other, older] of this.#notebooks) {
      if (this.#notebooks.size <= this.maxNotebooks) break;
      if (other !== session && !older.busy) this.#close(other);
    }
    if (session !== this.#shown) this.#leave(session, { again: true }); // used off screen (a turn running there)
    return sandbox;
  }

  /**
   * A notebook closed to free its memory: its next run says its variables are gone.
   * @param {string} session
   */
  #close(session) {
    const sandbox = this.#notebooks.get(session);
    if (sandbox?.ran) this.#closed.add(session);
    sandbox?.stop();
  }

  /**
   * The conversation is off screen: its notebook closes after `leftMs`, unless it is shown again or busy.
   * @param {string} session
   * @param {{again?: boolean}} [options]   start the wait again if it is already waiting
   */
  #leave(session, { again = false } = {}) {
    if (this.#leaving.has(session) && !again) return;
    clearTimeout(this.#leaving.get(session));
    const timer = setTimeout(() => {
      this.#leaving.delete(session);
      const sandbox = this.#notebooks.get(session);
      if (session === this.#shown || !sandbox) return;
      if (sandbox.busy) this.#leave(session);
      else this.#close(session);
    }, this.leftMs);
    this.#leaving.set(session, timer);
  }

  /** @param {string | null | undefined} session   the conversation on screen, if any */
  shown(session) {
    this.#shown = session ?? null;
    if (session != null) {
      clearTimeout(this.#leaving.get(session));
      this.#leaving.delete(session);
    }
    for (const other of this.#notebooks.keys()) if (other !== session) this.#leave(other);
  }

  /**
   * @param {string} set
   * @param {string | null | undefined} source
   */
  useTools(set, source) {
    if (source?.trim()) this.#toolSources.set(set, source);
    else this.#toolSources.delete(set);
    this.#defined.delete(set);
  }

  /**
   * @param {string} set
   * @param {string | null | undefined} source
   * @param {{timeoutMs?: number}} [options]
   * @returns {Promise<ToolDefinition[]>}
   */
  async defineTools(set, source, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    this.useTools(set, source);
    if (!source?.trim()) {
      if (this.#hosting) await this.#tools?.request({ type: "tools", set, source: "" }, { timeoutMs });
      return [];
    }
    return this.#define(set, timeoutMs);
  }

  /**
   * @param {string} set
   * @param {string} name
   * @param {unknown} args   the model's arguments
   * @param {{callId?: string, timeoutMs?: number, signal?: AbortSignal | null}} [options]
   * @returns {Promise<CallResult>}
   */
  async callTool(set, name, args, { callId = "", timeoutMs = DEFAULT_TIMEOUT_MS, signal = null } = {}) {
    try {
      await this.#define(set, timeoutMs); // in a new sandbox: loading pydantic is not the tool's time
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { content: [{ type: "text", text: message }], is_error: true };
    }
    const reply = await this.#toolSandbox().request({ type: "call", set, name, arguments: args, call_id: callId },
                                                    { timeoutMs, signal });
    if (reply.ended) return { content: [{ type: "text", text: stopped(reply.ended, 0, timeoutMs).error }], is_error: true };
    return /** @type {CallResult} */ (reply.result);
  }

  /** @returns {Sandbox} */
  #toolSandbox() {
    if (!this.#tools) {
      const sandbox = (this.#tools = new Sandbox(this));
      sandbox.onStop = () => {
        if (this.#tools !== sandbox) return;
        this.#tools = null;
        this.#defined.clear(); // the tool sets are defined again in the next sandbox
        this.#hosting = null;
      };
    }
    return this.#tools;
  }

  /**
   * The set, defined in the tools' running sandbox (once per sandbox: a new one defines it again).
   * @param {string} set
   * @param {number} timeoutMs
   * @returns {Promise<ToolDefinition[]>}
   */
  #define(set, timeoutMs) {
    const source = this.#toolSources.get(set);
    if (source === undefined) return Promise.reject(new InterpreterError(`no Python tool set ${set}`));
    let defining = this.#defined.get(set);
    if (!defining) {
      const made = (defining = (async () => {
        await this.#toolHost();
        const reply = await this.#toolSandbox().request({ type: "tools", set, source }, { timeoutMs });
        if (reply.ended) throw new InterpreterError(stopped(reply.ended, 0, timeoutMs).error);
        const answer = /** @type {import("./messages.js").ToolsResult} */ (reply.result);
        if (answer.error !== undefined) throw new InterpreterError(answer.error);
        return answer.tools;
      })());
      this.#defined.set(set, made);
      made.catch(() => this.#defined.get(set) === made && this.#defined.delete(set));
    }
    return defining;
  }

  /**
   * pydantic and pycore in the tools' running sandbox, once: their loading is not counted against a tool's limit.
   * @returns {Promise<void>}
   */
  #toolHost() {
    const hosting = (this.#hosting ??= (async () => {
      const fetching = (this.#toolWheels ??= Promise.all(this.toolWheelURLs.map((url) => bytes(url))));
      const wheels = await fetching.catch((err) => {
        this.#toolWheels = null;
        throw err;
      });
      const copies = wheels.map((wheel) => wheel.slice(0)); // transferred: kept here for the next sandbox
      const reply = await this.#toolSandbox().request({ type: "tool-host", wheels: copies },
                                                      { timeoutMs: TOOL_HOST_TIMEOUT_MS, transfer: copies });
      if (reply.ended) throw new InterpreterError(stopped(reply.ended, 0, TOOL_HOST_TIMEOUT_MS).error);
      const answer = /** @type {import("./messages.js").ToolHostResult} */ (reply.result);
      if (answer.error) throw new InterpreterError(`the Python tools could not start: ${answer.error}`);
    })());
    hosting.catch(() => this.#hosting === hosting && (this.#hosting = null));
    return hosting;
  }

  /** @param {Partial<PackageHosts>} [hosts]   the package hosts the user turned on */
  configure({ indexes = [], pyodide = null } = {}) {
    const next = { indexes: [...indexes], pyodide: pyodide || null };
    if (JSON.stringify(next) === JSON.stringify(this.packages)) return;
    this.packages = next;
    this.stop();
  }

  /** @param {string} session */
  warm(session) {
    this.#notebook(session).start().catch(() => {}); // a failure is reported by the run that needs it
  }

  /** @param {string} session */
  reset(session) {
    this.#closed.delete(session);
    this.#notebooks.get(session)?.stop();
  }

  stop() {
    for (const sandbox of [...this.#notebooks.values(), this.#tools]) sandbox?.stop();
  }

  /**
   * What a new sandbox boots from: Pyodide's files, the worker's source, sandbox_py, micropip's wheel (copies).
   * @returns {Promise<{files: BootFiles, source: string}>}
   */
  async materials() {
    const [pyodide, source, python, wheels] = await Promise.all([this.#pyodideFiles(), text(this.workerScript),
      bytes(this.python), Promise.all(this.wheels.map((url) => bytes(url)))]);
    return { files: { ...pyodide, "sandbox_py.zip": python, wheels }, source };
  }

  /** @returns {Promise<Omit<BootFiles, "sandbox_py.zip" | "wheels">>} Pyodide's own files, the site's copy */
  async #pyodideFiles() {
    const base = new URL(this.pyodide, document.baseURI);
    /** @param {string} name */
    const get = async (name) => {
      const response = await fetch(new URL(name, base));
      if (!response.ok) throw new InterpreterError(`could not load ${name} for the code interpreter: HTTP ${response.status}`);
      return response;
    };
    /** @param {string} name */
    const asText = async (name) => (await get(name)).text();
    /** @param {string} name */
    const asBytes = async (name) => (await get(name)).arrayBuffer();
    const [mjs, asm, lock, wasm, stdlib] = await Promise.all([asText("pyodide.mjs"), asText("pyodide.asm.mjs"),
      asText("pyodide-lock.json"), asBytes("pyodide.asm.wasm"), asBytes("python_stdlib.zip")]);
    return { "pyodide.mjs": mjs, "pyodide.asm.mjs": asm, "pyodide-lock.json": lock, "pyodide.asm.wasm": wasm,
             "python_stdlib.zip": stdlib };
  }
}

/**
 * One sandbox: its frame, its worker, and the MessageChannel to that worker (the page keeps one port; the other
 * goes to the worker in its boot message, and the frame keeps nothing of it).
 */
class Sandbox {
  /** @type {HTMLIFrameElement | null} */
  #frame = null;
  /** @type {MessagePort | null} */
  #port = null;
  /** @type {Promise<void> | null} the sandbox's start */
  #ready = null;
  /** @type {Map<number, {resolve: (reply: Reply) => void}>} request id -> its answer's resolver */
  #pending = new Map();
  #waiting = 0; // requests waiting for the start
  #nextId = 1;
  #callsOut = 0; // the code's tool calls (code mode) not answered yet
  #callsSince = 0; // when the first of them went out
  #callsTotal = 0; // ms the code has spent waiting for its tool calls, before those out now
  /**
   * @type {{resolve: () => void, reject: (err: Error) => void, files: BootFiles, source: string} | null}
   *   while the sandbox starts
   */
  #booting = null;

  /** @param {Interpreter} host */
  constructor(host) {
    this.host = host;
    this.ran = false;
    /** @type {() => void} */
    this.onStop = () => {};
    /** @type {ToolCaller | null} the running run's (code mode): none between runs */
    this.onToolCall = null;
    /** @param {MessageEvent} event */
    this.onMessage = (event) => this.#receive(event);
  }

  get busy() {
    return this.#pending.size + this.#waiting > 0;
  }

  /**
   * One message to the sandbox and its answer: {result}, or {ended: "timeout" | "stopped" | "restarted"} when the
   * limit passed or `signal` stopped it first (which ends the sandbox: a worker cannot be interrupted here).
   */
  /**
   * @param {PageRequest} message
   * @param {{timeoutMs?: number, signal?: AbortSignal | null, transfer?: Transferable[]}} [options]
   * @returns {Promise<Reply>}
   */
  async request(message, { timeoutMs = DEFAULT_TIMEOUT_MS, signal = null, transfer = [] } = {}) {
    if (signal?.aborted) return { ended: "stopped" };
    this.#waiting += 1;
    try {
      await this.start();
    } finally {
      this.#waiting -= 1;
    }
    if (!this.#port) return { ended: "restarted" }; // stopped between its start and now
    const id = this.#nextId++;
    /** @type {Promise<Reply>} */
    const answer = new Promise((resolve) => this.#pending.set(id, { resolve }));
    /** @param {Ended} why */
    const ended = (why) => () => {
      const mine = this.#pending.get(id);
      if (!mine) return;
      this.#pending.delete(id);
      mine.resolve({ ended: why });
      this.stop(); // the sandbox goes, and any other run in it
    };
    // The limit is the code's own time: while it waits for a tool call (the user deciding, the server working), the
    // clock stops, so a question read slowly does not end the run.
    const expire = ended("timeout");
    let credited = this.#waited();
    const check = () => {
      const waited = this.#waited();
      if (this.#callsOut === 0 && waited === credited) return expire();
      timer = setTimeout(check, Math.max(waited - credited, 250));
      credited = waited;
      return undefined;
    };
    let timer = setTimeout(check, timeoutMs);
    const onAbort = ended("stopped");
    signal?.addEventListener("abort", onAbort);
    this.#port.postMessage({ ...message, id }, transfer);
    try {
      return await answer;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      this.#pending.delete(id);
    }
  }

  /** ms the code has spent waiting for its tool calls (code mode), those out now included */
  #waited() {
    return this.#callsTotal + (this.#callsOut ? performance.now() - this.#callsSince : 0);
  }

  /** @returns {Promise<void>} the sandbox is up: its worker said it is ready */
  start() {
    if (this.#ready) return this.#ready;
    const ready = (this.#ready = (async () => {
      const { files, source } = await this.host.materials();
      if (!this.#ready) throw new InterpreterError("the code interpreter was stopped while it started");
      const frame = document.createElement("iframe");
      frame.className = "interpreter-sandbox";
      frame.hidden = true;
      frame.title = "Code interpreter sandbox";
      frame.setAttribute("sandbox", "allow-scripts");
      frame.srcdoc = sandboxDocument(new URL(this.host.frameScript, document.baseURI).href, hostsOf(this.host.packages));
      /** @type {Promise<void>} */
      const up = new Promise((resolve, reject) => (this.#booting = { resolve, reject, files, source }));
      window.addEventListener("message", this.onMessage);
      this.#frame = frame;
      document.body.append(frame);
      await up;
    })());
    ready.catch(() => this.stop());
    return ready;
  }

  stop() {
    window.removeEventListener("message", this.onMessage);
    this.#port?.close();
    this.#port = null;
    this.#frame?.remove();
    this.#frame = null;
    this.#ready = null;
    this.#booting?.reject(new InterpreterError("the code interpreter was stopped while it started"));
    this.#booting = null;
    for (const [id, { resolve }] of this.#pending) resolve({ ended: "restarted" }), this.#pending.delete(id);
    this.onStop();
  }

  /**
   * The frame's own words: it is up (then it gets the worker's source, files and port), crashed, or refused.
   * @param {MessageEvent} event
   */
  #receive(event) {
    const frame = this.#frame?.contentWindow;
    if (!frame || event.source !== frame) return; // this sandbox's frame only
    const msg = /** @type {import("./messages.js").FrameNews | null} */ (event.data);
    if (msg?.type === "frame" && this.#booting && !this.#port) {
      const { files, source } = this.#booting;
      const channel = new MessageChannel();
      this.#port = channel.port1;
      this.#port.onmessage = ({ data }) => this.#answer(data);
      const buffers = Object.values(files).flat().filter((v) => v instanceof ArrayBuffer);
      /** @type {import("./messages.js").Start} */
      const start = { type: "start", files, source, packages: this.host.packages, port: channel.port2 };
      frame.postMessage(start, "*", [channel.port2, ...buffers]);
    } else if (msg?.type === "crashed" && this.#booting) {
      this.#booting.reject(new InterpreterError(`the code interpreter could not start: ${msg.message}`));
      this.#booting = null;
    } else if (msg?.type === "crashed") {
      this.stop();
    } else if (msg?.type === "refused") {
      this.host.refused.push({ directive: String(msg.directive), blocked: String(msg.blocked) });
      console.warn(`code interpreter: the sandbox's policy refused ${msg.directive} ${msg.blocked}`);
    }
  }

  /**
   * The worker's words, over the channel: up, failed to start, or a request's answer.
   * @param {import("./messages.js").WorkerNews | null} msg
   */
  #answer(msg) {
    if (msg?.type === "ready") {
      this.#booting?.resolve();
      this.#booting = null;
    } else if (msg?.type === "boot-failed") {
      this.#booting?.reject(new InterpreterError(`the code interpreter could not start: ${msg.message}`));
      this.#booting = null;
    } else if (msg?.type === "result") {
      this.#pending.get(msg.id)?.resolve({ result: msg.result });
    } else if (msg?.type === "tool-call") {
      this.#toolCall(msg).catch(() => {}); // the sandbox ended meanwhile: no one to answer
    }
  }

  /**
   * Code mode: a tool call the code makes, answered by the running run's caller; it is the code's, so nothing of it
   * is trusted here (the caller checks it against the run's tools and the core asks the user).
   * @param {import("./messages.js").ToolCall} msg
   */
  async #toolCall({ id, request }) {
    const caller = this.onToolCall;
    if (this.#callsOut++ === 0) this.#callsSince = performance.now();
    /** @type {ToolAnswer} */
    let answer;
    try {
      if (!caller) throw new InterpreterError("tools can be called only while a python call runs");
      const parsed = JSON.parse(String(request));
      const args = parsed?.arguments;
      answer = await caller({ server: String(parsed?.server), tool: String(parsed?.tool),
                              arguments: args && typeof args === "object" && !Array.isArray(args) ? args : {} });
    } catch (err) {
      answer = { error: err instanceof Error ? err.message : String(err) };
    } finally {
      if (--this.#callsOut === 0) this.#callsTotal += performance.now() - this.#callsSince;
    }
    /** @type {import("./messages.js").ToolAnswer} */
    const reply = { type: "tool-answer", id: Number(id), answer: JSON.stringify(answer) };
    this.#port?.postMessage(reply);
  }
}

/**
 * The frame's document: its own policy, on top of the page's it inherits, lets it fetch only its blobs and the
 * package hosts the user turned on.
 */
/**
 * @param {string} frameScript   frame.js's URL
 * @param {string[]} hosts   the package hosts' origins
 */
function sandboxDocument(frameScript, hosts) {
  const policy = `default-src 'none'; script-src ${frameScript} blob: 'wasm-unsafe-eval'; worker-src blob:; ` +
    `connect-src blob: ${hosts.join(" ")}; style-src 'none'; img-src 'none'; form-action 'none'; base-uri 'none'`;
  return `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${policy}">` +
    `<script src="${frameScript}"></script></head><body></body></html>`;
}

/**
 * A run's result when it got no answer: its sandbox ended (past the limit, stopped, or with another run).
 * @param {Ended} why
 * @param {number} duration_ms
 * @param {number} [timeoutMs]
 * @returns {RunResult & {error: string}}
 */
function stopped(why, duration_ms, timeoutMs = 0) {
  const error = {
    timeout: `The code ran past the ${Math.round(timeoutMs / 1000)} s limit and was stopped. The interpreter was restarted: variables are gone.`,
    stopped: "Stopped. The interpreter was restarted: variables are gone.",
    restarted: "The interpreter was restarted while this code ran (another run was stopped): variables are gone.",
  }[why];
  return { stdout: "", stderr: "", value: null, error, outputs: [], duration_ms, restarted: why };
}

/** @type {Record<string, string>} */
const IMAGE_TYPES = { png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp",
  svg: "image/svg+xml" };
/** @type {Record<string, string>} */
const TEXT_TYPES = { csv: "text/csv", json: "application/json", txt: "text/plain", md: "text/markdown",
  html: "text/html", xml: "application/xml" };

/**
 * The files a run wrote, as the result carries them (base64, with a type from the name), up to MAX_OUTPUT_BYTES.
 * @param {import("./messages.js").WrittenFile[]} outputs
 * @returns {Promise<OutputFile[]>}
 */
async function describeOutputs(outputs) {
  let total = 0;
  /** @type {OutputFile[]} */
  const out = [];
  for (const { name, data } of outputs) {
    total += data.byteLength;
    if (total > MAX_OUTPUT_BYTES) break;
    const ext = (name.split(".").pop() ?? "").toLowerCase();
    const mime_type = IMAGE_TYPES[ext] ?? TEXT_TYPES[ext] ?? "application/octet-stream";
    out.push({ name, mime_type, data: toBase64(new Uint8Array(data)) });
    // An SVG stays a file (a download, never markup in the page); a PNG drawn from it shows inline and goes to
    // a vision model. Drawn as an image, an SVG runs no script and loads nothing (the browser's static mode).
    const png = mime_type === "image/svg+xml" ? await rasterize(data).catch(() => null) : null;
    if (png) out.push({ name: `${name.replace(/\.svg$/i, "")}.png`, mime_type: "image/png", data: toBase64(png), drawn_from: name });
  }
  return out;
}

const MAX_SIDE = 2048;

/**
 * @param {Uint8Array<ArrayBuffer>} svg
 * @returns {Promise<Uint8Array | null>}   a PNG of it, or null where the browser cannot draw one
 */
async function rasterize(svg) {
  const url = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }));
  try {
    const image = new Image();
    image.src = url;
    await image.decode();
    const scale = Math.min(1, MAX_SIDE / Math.max(image.naturalWidth || 800, image.naturalHeight || 600));
    const canvas = document.createElement("canvas");
    canvas.width = Math.max(1, Math.round((image.naturalWidth || 800) * scale));
    canvas.height = Math.max(1, Math.round((image.naturalHeight || 600) * scale));
    const context = canvas.getContext("2d");
    if (!context) return null; // no 2D canvas here: the SVG stays a file
    context.fillStyle = "#fff"; // transparent areas read as white, as the figure would print
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.drawImage(image, 0, 0, canvas.width, canvas.height);
    /** @type {Blob | null} */
    const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
    return blob ? new Uint8Array(await blob.arrayBuffer()) : null;
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** @param {string} url  @returns {Promise<ArrayBuffer>} */
async function bytes(url) {
  const response = await fetch(new URL(url, document.baseURI));
  if (!response.ok) throw new InterpreterError(`could not load the code interpreter: HTTP ${response.status}`);
  return response.arrayBuffer();
}

/** @param {string} url  @returns {Promise<string>} */
async function text(url) {
  const response = await fetch(new URL(url, document.baseURI));
  if (!response.ok) throw new InterpreterError(`could not load the code interpreter: HTTP ${response.status}`);
  return response.text();
}

/** @param {number} bytes */
const gb = (bytes) => `${(bytes / 1024 ** 3).toFixed(1)} GB`;
