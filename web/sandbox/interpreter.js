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
 *   await interpreter.run(session, code, {files, timeoutMs, signal})
 *        -> {stdout, stderr, value, error, notice?, outputs: [{name, mime_type, data: base64}], duration_ms,
 *            restarted?}
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
  #notebooks = new Map(); // session -> Sandbox, the least recently used first
  #closed = new Set(); // sessions whose notebook was closed after it ran: their next run says so
  #leaving = new Map(); // session -> the timer that closes its notebook, once it is off screen
  #shown = null;
  #tools = null; // the Sandbox of the user's Python tools
  #toolSources = new Map(); // set id -> source: the user's Python tool sets, defined again in each new sandbox
  #defined = new Map(); // set id -> Promise of its definition in the tools' running sandbox
  #toolWheels = null; // Promise of [ArrayBuffer]: pydantic's and pycore's wheels, fetched once
  #hosting = null; // Promise: the tools' running sandbox has loaded them

  constructor({ pyodide, frameScript, workerScript, python, wheels = [], toolWheels = [],
                maxNotebooks = MAX_NOTEBOOKS, leftMs = LEFT_MS }) {
    Object.assign(this, { pyodide, frameScript, workerScript, python, wheels, toolWheelURLs: toolWheels,
                          maxNotebooks, leftMs });
    this.packages = { indexes: [], pyodide: null };
    this.refused = []; // what the sandboxes' policy blocked: {directive, blocked}
  }

  get sandboxes() {
    return this.#notebooks.size + (this.#tools ? 1 : 0);
  }

  async run(session, code, { files = [], timeoutMs = DEFAULT_TIMEOUT_MS, signal = null } = {}) {
    const started = performance.now();
    const sandbox = this.#notebook(session);
    const closed = this.#closed.delete(session);
    const copies = files.map(({ name, data }) => ({ name, data: data.slice(0) })); // transferred: the caller keeps its own
    const reply = await sandbox.request({ type: "run", code, files: copies },
                                        { timeoutMs, signal, transfer: copies.map((f) => f.data) });
    sandbox.ran = true;
    const duration_ms = Math.round(performance.now() - started);
    const result = reply.ended ? stopped(reply.ended, duration_ms, timeoutMs)
      : { ...reply.result, duration_ms, outputs: await describeOutputs(reply.result.outputs ?? []) };
    if (reply.result?.memory > MEMORY_CEILING) {
      sandbox.stop();
      result.restarted = "memory";
      result.error = `${result.error ? `${result.error}\n` : ""}The interpreter used ${gb(reply.result.memory)} of memory ` +
        `(the ceiling is ${gb(MEMORY_CEILING)}), so it was restarted: variables are gone.`;
    }
    delete result.memory;
    if (closed) Object.assign(result, { restarted: result.restarted ?? "closed", notice: CLOSED_NOTICE });
    return result;
  }

  /** The session's sandbox, the most recently used now; a new one may close the least recently used idle one. */
  #notebook(session) {
    let sandbox = this.#notebooks.get(session);
    this.#notebooks.delete(session);
    if (!sandbox) {
      sandbox = new Sandbox(this);
      sandbox.onStop = () => this.#notebooks.get(session) === sandbox && this.#notebooks.delete(session);
    }
    this.#notebooks.set(session, sandbox);
    for (const [other, older] of this.#notebooks) {
      if (this.#notebooks.size <= this.maxNotebooks) break;
      if (other !== session && !older.busy) this.#close(other);
    }
    if (session !== this.#shown) this.#leave(session, { again: true }); // used off screen (a turn running there)
    return sandbox;
  }

  /** A notebook closed to free its memory: its next run says its variables are gone. */
  #close(session) {
    const sandbox = this.#notebooks.get(session);
    if (sandbox?.ran) this.#closed.add(session);
    sandbox?.stop();
  }

  /** The conversation is off screen: its notebook closes after `leftMs`, unless it is shown again or busy. */
  #leave(session, { again = false } = {}) {
    if (this.#leaving.has(session) && !again) return;
    clearTimeout(this.#leaving.get(session));
    const timer = setTimeout(() => {
      this.#leaving.delete(session);
      if (session === this.#shown || !this.#notebooks.has(session)) return;
      if (this.#notebooks.get(session).busy) this.#leave(session);
      else this.#close(session);
    }, this.leftMs);
    this.#leaving.set(session, timer);
  }

  shown(session) {
    this.#shown = session ?? null;
    clearTimeout(this.#leaving.get(session));
    this.#leaving.delete(session);
    for (const other of this.#notebooks.keys()) if (other !== session) this.#leave(other);
  }

  useTools(set, source) {
    if (source?.trim()) this.#toolSources.set(set, source);
    else this.#toolSources.delete(set);
    this.#defined.delete(set);
  }

  async defineTools(set, source, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    this.useTools(set, source);
    if (!source?.trim()) {
      if (this.#hosting) await this.#tools?.request({ type: "tools", set, source: "" }, { timeoutMs });
      return [];
    }
    return this.#define(set, timeoutMs);
  }

  async callTool(set, name, args, { callId = "", timeoutMs = DEFAULT_TIMEOUT_MS, signal = null } = {}) {
    try {
      await this.#define(set, timeoutMs); // in a new sandbox: loading pydantic is not the tool's time
    } catch (err) {
      return { content: [{ type: "text", text: err.message }], is_error: true };
    }
    const reply = await this.#toolSandbox().request({ type: "call", set, name, arguments: args, call_id: callId },
                                                    { timeoutMs, signal });
    if (reply.ended) return { content: [{ type: "text", text: stopped(reply.ended, 0, timeoutMs).error }], is_error: true };
    return reply.result;
  }

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

  /** The set, defined in the tools' running sandbox (once per sandbox: a new one defines it again). */
  #define(set, timeoutMs) {
    if (!this.#toolSources.has(set)) return Promise.reject(new InterpreterError(`no Python tool set ${set}`));
    if (!this.#defined.has(set)) {
      const source = this.#toolSources.get(set);
      const defining = (async () => {
        await this.#toolHost();
        const reply = await this.#toolSandbox().request({ type: "tools", set, source }, { timeoutMs });
        if (reply.ended) throw new InterpreterError(stopped(reply.ended, 0, timeoutMs).error);
        if (reply.result.error) throw new InterpreterError(reply.result.error);
        return reply.result.tools;
      })();
      this.#defined.set(set, defining);
      defining.catch(() => this.#defined.get(set) === defining && this.#defined.delete(set));
    }
    return this.#defined.get(set);
  }

  /** pydantic and pycore in the tools' running sandbox, once: their loading is not counted against a tool's limit. */
  #toolHost() {
    this.#hosting ??= (async () => {
      this.#toolWheels ??= Promise.all(this.toolWheelURLs.map((url) => bytes(url)));
      const wheels = await this.#toolWheels.catch((err) => {
        this.#toolWheels = null;
        throw err;
      });
      const copies = wheels.map((wheel) => wheel.slice(0)); // transferred: kept here for the next sandbox
      const reply = await this.#toolSandbox().request({ type: "tool-host", wheels: copies },
                                                      { timeoutMs: TOOL_HOST_TIMEOUT_MS, transfer: copies });
      if (reply.ended) throw new InterpreterError(stopped(reply.ended, 0, TOOL_HOST_TIMEOUT_MS).error);
      if (reply.result.error) throw new InterpreterError(`the Python tools could not start: ${reply.result.error}`);
    })();
    const hosting = this.#hosting;
    hosting.catch(() => this.#hosting === hosting && (this.#hosting = null));
    return hosting;
  }

  configure({ indexes = [], pyodide = null } = {}) {
    const next = { indexes: [...indexes], pyodide: pyodide || null };
    if (JSON.stringify(next) === JSON.stringify(this.packages)) return;
    this.packages = next;
    this.stop();
  }

  warm(session) {
    this.#notebook(session).start().catch(() => {}); // a failure is reported by the run that needs it
  }

  reset(session) {
    this.#closed.delete(session);
    this.#notebooks.get(session)?.stop();
  }

  stop() {
    for (const sandbox of [...this.#notebooks.values(), this.#tools]) sandbox?.stop();
  }

  /** What a new sandbox boots from: Pyodide's files, the worker's source, sandbox_py, micropip's wheel (copies). */
  async materials() {
    const [files, source, python, wheels] = await Promise.all([this.#pyodideFiles(), text(this.workerScript),
      bytes(this.python), Promise.all(this.wheels.map((url) => bytes(url)))]);
    files["sandbox_py.zip"] = python;
    files.wheels = wheels;
    return { files, source };
  }

  async #pyodideFiles() {
    const base = new URL(this.pyodide, document.baseURI);
    const get = async (name, as) => {
      const response = await fetch(new URL(name, base));
      if (!response.ok) throw new InterpreterError(`could not load ${name} for the code interpreter: HTTP ${response.status}`);
      return as === "text" ? response.text() : response.arrayBuffer();
    };
    const names = { "pyodide.mjs": "text", "pyodide.asm.mjs": "text", "pyodide-lock.json": "text",
      "pyodide.asm.wasm": "bytes", "python_stdlib.zip": "bytes" };
    const entries = await Promise.all(Object.entries(names).map(async ([name, as]) => [name, await get(name, as)]));
    return Object.fromEntries(entries);
  }
}

/**
 * One sandbox: its frame, its worker, and the MessageChannel to that worker (the page keeps one port; the other
 * goes to the worker in its boot message, and the frame keeps nothing of it).
 */
class Sandbox {
  #frame = null;
  #port = null;
  #ready = null; // Promise of the sandbox's start
  #pending = new Map(); // request id -> {resolve}
  #waiting = 0; // requests waiting for the start
  #nextId = 1;
  #booting = null; // {resolve, reject, files, source} while the sandbox starts

  constructor(host) {
    this.host = host;
    this.ran = false;
    this.onStop = () => {};
    this.onMessage = (event) => this.#receive(event);
  }

  get busy() {
    return this.#pending.size + this.#waiting > 0;
  }

  /**
   * One message to the sandbox and its answer: {result}, or {ended: "timeout" | "stopped" | "restarted"} when the
   * limit passed or `signal` stopped it first (which ends the sandbox: a worker cannot be interrupted here).
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
    const answer = new Promise((resolve) => this.#pending.set(id, { resolve }));
    const ended = (why) => () => {
      const mine = this.#pending.get(id);
      if (!mine) return;
      this.#pending.delete(id);
      mine.resolve({ ended: why });
      this.stop(); // the sandbox goes, and any other run in it
    };
    const timer = setTimeout(ended("timeout"), timeoutMs);
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

  start() {
    if (this.#ready) return this.#ready;
    this.#ready = (async () => {
      const { files, source } = await this.host.materials();
      if (!this.#ready) throw new InterpreterError("the code interpreter was stopped while it started");
      const frame = document.createElement("iframe");
      frame.className = "interpreter-sandbox";
      frame.hidden = true;
      frame.title = "Code interpreter sandbox";
      frame.setAttribute("sandbox", "allow-scripts");
      frame.srcdoc = sandboxDocument(new URL(this.host.frameScript, document.baseURI).href, hostsOf(this.host.packages));
      const up = new Promise((resolve, reject) => (this.#booting = { resolve, reject, files, source }));
      window.addEventListener("message", this.onMessage);
      this.#frame = frame;
      document.body.append(frame);
      await up;
    })();
    this.#ready.catch(() => this.stop());
    return this.#ready;
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

  /** The frame's own words: it is up (then it gets the worker's source, files and port), crashed, or refused. */
  #receive(event) {
    if (!this.#frame || event.source !== this.#frame.contentWindow) return; // this sandbox's frame only
    const msg = event.data;
    if (msg?.type === "frame" && this.#booting && !this.#port) {
      const { files, source } = this.#booting;
      const channel = new MessageChannel();
      this.#port = channel.port1;
      this.#port.onmessage = ({ data }) => this.#answer(data);
      const buffers = Object.values(files).flat().filter((v) => v instanceof ArrayBuffer);
      this.#frame.contentWindow.postMessage({ type: "start", files, source, packages: this.host.packages,
                                              port: channel.port2 }, "*", [channel.port2, ...buffers]);
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

  /** The worker's words, over the channel: up, failed to start, or a request's answer. */
  #answer(msg) {
    if (msg?.type === "ready") {
      this.#booting?.resolve();
      this.#booting = null;
    } else if (msg?.type === "boot-failed") {
      this.#booting?.reject(new InterpreterError(`the code interpreter could not start: ${msg.message}`));
      this.#booting = null;
    } else if (msg?.type === "result" && this.#pending.has(msg.id)) {
      this.#pending.get(msg.id).resolve({ result: msg.result });
    }
  }
}

/**
 * The frame's document: its own policy, on top of the page's it inherits, lets it fetch only its blobs and the
 * package hosts the user turned on.
 */
function sandboxDocument(frameScript, hosts) {
  const policy = `default-src 'none'; script-src ${frameScript} blob: 'wasm-unsafe-eval'; worker-src blob:; ` +
    `connect-src blob: ${hosts.join(" ")}; style-src 'none'; img-src 'none'; form-action 'none'; base-uri 'none'`;
  return `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${policy}">` +
    `<script src="${frameScript}"></script></head><body></body></html>`;
}

function stopped(why, duration_ms, timeoutMs = 0) {
  const error = {
    timeout: `The code ran past the ${Math.round(timeoutMs / 1000)} s limit and was stopped. The interpreter was restarted: variables are gone.`,
    stopped: "Stopped. The interpreter was restarted: variables are gone.",
    restarted: "The interpreter was restarted while this code ran (another run was stopped): variables are gone.",
  }[why];
  return { stdout: "", stderr: "", value: null, error, outputs: [], duration_ms, restarted: why };
}

const IMAGE_TYPES = { png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp",
  svg: "image/svg+xml" };
const TEXT_TYPES = { csv: "text/csv", json: "application/json", txt: "text/plain", md: "text/markdown",
  html: "text/html", xml: "application/xml" };

async function describeOutputs(outputs) {
  let total = 0;
  const out = [];
  for (const { name, data } of outputs) {
    total += data.byteLength;
    if (total > MAX_OUTPUT_BYTES) break;
    const ext = name.split(".").pop().toLowerCase();
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
    context.fillStyle = "#fff"; // transparent areas read as white, as the figure would print
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.drawImage(image, 0, 0, canvas.width, canvas.height);
    const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
    return blob ? new Uint8Array(await blob.arrayBuffer()) : null;
  } finally {
    URL.revokeObjectURL(url);
  }
}

async function bytes(url) {
  const response = await fetch(new URL(url, document.baseURI));
  if (!response.ok) throw new InterpreterError(`could not load the code interpreter: HTTP ${response.status}`);
  return response.arrayBuffer();
}

async function text(url) {
  const response = await fetch(new URL(url, document.baseURI));
  if (!response.ok) throw new InterpreterError(`could not load the code interpreter: HTTP ${response.status}`);
  return response.text();
}

const gb = (bytes) => `${(bytes / 1024 ** 3).toFixed(1)} GB`;
