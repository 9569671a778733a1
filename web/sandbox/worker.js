// The code interpreter's Python: Pyodide in a worker started from a blob inside the sandboxed frame
// (frame.js), so in an opaque origin under a policy that allows no fetch but of blobs. The page sends
// Pyodide's files; this worker never fetches anything itself. Once Python is up it also deletes the
// network and worker constructors from its own scope (the policy already blocks them: two locks, not one).
// One worker serves one conversation's notebook, or the user's Python tools: never both, never two.
//
// The page talks to this script over a MessageChannel: the boot message (from the frame) brings the port, which
// is kept in this script's closure and answered through a postMessage taken before any Python runs; the channel's
// prototypes are frozen before the first cell. So code can neither reach the port nor answer in its place:
// replacing self.onmessage or adding a listener hears nothing (nothing comes that way after the boot), and what it
// posts with self.postMessage goes to the frame, which passes nothing on.
//
// Its Python is the package sandbox_py/ (the notebook's cell runner, the Python tools' host), which the page sends
// as a zip in the boot message; this script only passes messages to it and moves bytes in and out of its files.
// With a Pyodide package repository turned on, the Pyodide packages a cell imports (numpy, pandas, matplotlib...)
// are loaded from it before the cell runs, as its pyodide-lock.json lists them; matplotlib's figures come back as
// PNG files among the cell's outputs (sandbox_py.figures).
//
// The shapes below, as types: messages.js.
// In:  {type: "boot", port, files: {"pyodide.mjs", "pyodide.asm.mjs", "pyodide-lock.json": text,
//                                   "pyodide.asm.wasm", "python_stdlib.zip", "sandbox_py.zip": ArrayBuffer,
//                                   wheels: [ArrayBuffer]},
//                      packages: {indexes: [url], pyodide: url | null}}   (on self, once) the hosts the user turned on
// Then over the port:
//      {type: "run", id, code, files: [{name, data: ArrayBuffer}], tools: [Entry]}   files go to /mnt/data; tools:
//                                             what `orizuru.tools` may call during this run (web/sandbox/code_mode.js)
//      {type: "tool-answer", id, answer}   the page's answer (JSON text) to this worker's "tool-call" of that id
//      {type: "tool-host", id, wheels: [ArrayBuffer]}   pydantic and pycore, before the first tool set
//      {type: "tools", id, set, source}   the user's Python tool set (source text; empty: forget it)
//      {type: "call", id, set, name, arguments, call_id}   one of those tools, with the model's arguments
// Out (over the port): {type: "ready", python}, {type: "boot-failed", message},
//      {type: "tool-call", id, request}   code mode: a call the notebook's `orizuru.tools` makes (JSON text
//                                         {server, tool, arguments}); the page asks the core, which asks the user
//      {type: "result", id, result: {stdout, stderr, value, error, outputs: [{name, mime_type, data}], memory}}
//      {type: "result", id, result: {} | {error}}                                                      for "tool-host"
//      {type: "result", id, result: {tools: [{name, description, inputSchema}]} | {error}}            for "tools"
//      {type: "result", id, result: {content, is_error, structured_content}}                          for "call"
"use strict";

(() => {
/** @typedef {import("pyodide").PyodideInterface} Pyodide */
/** @typedef {import("pyodide/ffi").PyProxy} PyProxy */
/** @typedef {import("./messages.js").Boot} Boot */
/** @typedef {import("./messages.js").BootFiles} BootFiles */
/** @typedef {import("./messages.js").PackageHosts} PackageHosts */
/** @typedef {import("./messages.js").PageRequest} PageRequest */
/** @typedef {import("./messages.js").DataFile} DataFile */
/** @typedef {import("./messages.js").CellResult} CellResult */
/** @typedef {import("./messages.js").WorkerNews} WorkerNews */
/** @typedef {{run(code: string): Promise<PyProxy>}} Notebook   sandbox_py.cell.Notebook */
/** @typedef {{define(set: string, source: string): string,
 *             call(set: string, name: string, args: string, callId: string): Promise<string>}} ToolHost
 *   sandbox_py.tools.ToolHost: JSON text in and out */
/** @typedef {Omit<CellResult, "outputs" | "memory"> & {written: string[]}} Ran   what Notebook.run returns */
/** @typedef {{install(channel: (request: string) => Promise<string>): unknown, define(catalog: string): void}} CodeTools
 *   sandbox_py.code_tools: code mode's `orizuru` module */

const DATA = "/mnt/data";
const OUTPUTS = "/mnt/outputs";

const post = MessagePort.prototype.postMessage; // taken now: a later change to the prototype does not reach us
const apply = Reflect.apply;
/** @type {MessagePort | null} */
let port = null;
/** @type {Pyodide | null} */
let py = null;
/** @type {string | null} the Pyodide package repository the user turned on, ending in "/" */
let repository = null;
/** @type {Notebook | null} */
let notebook = null; // sandbox_py.cell.Notebook: the notebook's variables persist between runs
/** @type {Promise<ToolHost> | null} */
let tools = null; // Promise of sandbox_py.tools.ToolHost, made at the first tool set
/** @type {CodeTools | null} */
let codeTools = null; // sandbox_py.code_tools: the notebook's `orizuru.tools`
/** @type {Map<number, (answer: string) => void>} the code's tool calls the page has not answered yet */
const asking = new Map();
let lastAsked = 0;

/** @type {(message: WorkerNews, transfer?: Transferable[]) => void} */
const send = (message, transfer = []) => apply(post, port, [message, transfer]);

/** @param {unknown} err  @returns {string} */
const said = (err) => String(err instanceof Error ? err.message : err);

/** Python, once it is up (a request before that is answered with this error). */
function python() {
  if (!py) throw new Error("Python is not up in the code interpreter");
  return py;
}

self.onmessage = async (/** @type {MessageEvent} */ { data }) => {
  const msg = /** @type {Partial<Boot> | null} */ (data);
  if (msg?.type !== "boot" || port || !(msg.port instanceof MessagePort) || !msg.files) return;
  self.onmessage = null; // the boot comes once; the rest comes over the port
  port = msg.port;
  port.onmessage = ({ data: request }) => handle(request);
  await boot(msg.files, msg.packages ?? {});
};

/** @param {(PageRequest & {id: number}) | import("./messages.js").ToolAnswer | null} msg  from the page, over the port */
async function handle(msg) {
  if (msg?.type === "run") await run(msg);
  else if (msg?.type === "tool-host") await startToolHost(msg);
  else if (msg?.type === "tools") await defineTools(msg);
  else if (msg?.type === "call") await callTool(msg);
  else if (msg?.type === "tool-answer") answered(msg);
}

/**
 * Code mode's channel (sandbox_py.code_tools): one of the code's tool calls to the page, and its answer. Code that
 * calls this itself gains nothing: the page checks each request against the run's tools, and the core asks the user.
 * @param {string} request   JSON {server, tool, arguments}
 * @returns {Promise<string>}   JSON {result} | {denied} | {error}
 */
function askPage(request) {
  const id = ++lastAsked;
  return new Promise((resolve) => {
    asking.set(id, resolve);
    send({ type: "tool-call", id, request: String(request) });
  });
}

/** @param {import("./messages.js").ToolAnswer} msg */
function answered({ id, answer }) {
  asking.get(id)?.(String(answer));
  asking.delete(id);
}

/**
 * @param {BootFiles} files
 * @param {Partial<PackageHosts>} packages
 */
async function boot(files, { indexes = [], pyodide = null }) {
  try {
    /** @param {"pyodide.mjs" | "pyodide.asm.mjs"} name */
    const blobURL = (name) => URL.createObjectURL(new Blob([files[name]], { type: "text/javascript" }));
    /** @type {Record<string, string>} */
    const types = { "pyodide.asm.wasm": "application/wasm", "python_stdlib.zip": "application/zip" };
    const realFetch = self.fetch;
    // Pyodide fetches its wasm and standard library by URL: answer from the bytes the page sent.
    self.fetch = async (input) => {
      const name = new URL(input instanceof Request ? input.url : String(input)).pathname.split("/").pop();
      if (name !== "pyodide.asm.wasm" && name !== "python_stdlib.zip") {
        throw new TypeError("the code interpreter has no network");
      }
      return new Response(files[name], { headers: { "content-type": types[name] } });
    };
    const { loadPyodide } = /** @type {typeof import("pyodide")} */ (await import(blobURL("pyodide.mjs")));
    const asm = await import(blobURL("pyodide.asm.mjs"));
    // Pyodide's own packages (numpy, pandas, matplotlib...) come only from the repository the user turned on,
    // as its own lock lists them (names, files, sha256); without one, the lock lists none, so micropip looks for
    // everything on the indexes the user turned on.
    const bundled = JSON.parse(files["pyodide-lock.json"]);
    repository = pyodide ? (pyodide.endsWith("/") ? pyodide : `${pyodide}/`) : null;
    const lock = repository ? await repositoryLock(realFetch, repository, bundled.info) : { ...bundled, packages: {} };
    const up = (py = await loadPyodide({
      indexURL: "https://sandbox.invalid/pyodide/", // never fetched: see self.fetch above
      createPyodideModule: asm.default,
      lockFileContents: JSON.stringify(lock),
      ...(repository ? { packageBaseUrl: repository } : {}),
      packages: [],
    }));
    // Python is up: from here on only the frame's policy decides (the package hosts, or nothing). Before any
    // module that keeps a reference to fetch (pyodide.http, which micropip imports) is imported.
    self.fetch = realFetch;
    const sitePackages = up.runPython("import site; site.getsitepackages()[0]");
    for (const wheel of files.wheels ?? []) up.unpackArchive(wheel, "wheel", { extractDir: sitePackages }); // micropip
    up.unpackArchive(files["sandbox_py.zip"], "zip", { extractDir: sitePackages });
    up.pyimport("sandbox_py.figures").install(OUTPUTS); // matplotlib draws in memory; its figures become files
    if (indexes.length) {
      up.globals.set("_indexes", up.toPy(indexes));
      up.runPython("import micropip; micropip.set_index_urls(list(_indexes)); del _indexes");
    }
    up.FS.mkdirTree(DATA);
    up.FS.mkdirTree(OUTPUTS);
    up.FS.ignorePermissions = false; // so /mnt/data's files, made read-only, refuse writes
    // Pyodide's evaluator is the one thing sandbox_py takes from Pyodide: passed in, so that it runs in CPython too.
    const { Notebook } = up.pyimport("sandbox_py.cell");
    notebook = Notebook.callKwargs(up.pyimport("pyodide.code").eval_code_async, { outputs: OUTPUTS });
    codeTools = /** @type {CodeTools} */ (up.pyimport("sandbox_py.code_tools"));
    codeTools.install(askPage);
    lockDown({ network: indexes.length > 0 || Boolean(pyodide) });
    send({ type: "ready", python: up.version });
  } catch (err) {
    send({ type: "boot-failed", message: said(err) });
  }
}

/**
 * The lock of the Pyodide package repository the user added: its packages, their files and sha256 (each file is
 * checked against it as it loads). Refused, saying what to do, when the repository was built for another Pyodide:
 * its compiled packages would not load in this one.
 * @param {typeof self.fetch} get
 * @param {string} base   the repository's URL, ending in "/"
 * @param {{abi_version: string, python: string}} info   what this Pyodide is (its own lock's)
 */
async function repositoryLock(get, base, info) {
  /** @type {{info?: {abi_version?: string, python?: string}, packages?: object} | null} */
  let lock;
  try {
    const response = await get(`${base}pyodide-lock.json`);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    lock = await response.json();
  } catch (err) {
    throw new Error(`the Pyodide package repository ${base} has no pyodide-lock.json we could read (${said(err)}): ` +
      "give the URL of the folder that holds a Pyodide release's packages and its pyodide-lock.json", { cause: err });
  }
  const theirs = lock?.info;
  if (theirs?.abi_version !== info.abi_version || theirs?.python !== info.python) {
    throw new Error(`the Pyodide package repository ${base} is for Python ${theirs?.python ?? "?"} (Pyodide ABI ` +
      `${theirs?.abi_version ?? "?"}), but the code interpreter runs Python ${info.python} (ABI ${info.abi_version}): ` +
      "use the packages of the same Pyodide release as this site's");
  }
  return lock;
}

/**
 * Load the Pyodide packages the code imports, from the user's repository (none without one).
 * @param {string} code
 * @returns {Promise<string>}   what went wrong, for the cell's stderr ("" when nothing did)
 */
async function loadImports(code) {
  if (!repository) return "";
  /** @type {string[]} */
  const problems = [];
  try {
    await python().loadPackagesFromImports(code, { messageCallback: () => {}, errorCallback: (m) => problems.push(m) });
  } catch (err) {
    problems.push(said(err));
  }
  if (problems.length) {
    problems.push(`(a package could not be loaded from the Pyodide package repository ${repository}: its file is ` +
      "missing or unreachable, or is not the bytes its pyodide-lock.json lists)");
  }
  return problems.map((m) => `${m}\n`).join("");
}

/**
 * Take the ways out of this scope: storage, more workers and, unless the user turned package hosts on, the
 * network. The frame's policy blocks all of it too (and with hosts on, it lets `fetch` reach only those).
 * @param {{network: boolean}} options
 */
function lockDown({ network }) {
  // The channel's objects, frozen: code cannot patch them to catch the port when this script answers.
  for (const proto of [MessagePort.prototype, MessageEvent.prototype, Event.prototype, EventTarget.prototype]) {
    Object.freeze(proto);
  }
  const names = ["XMLHttpRequest", "WebSocket", "WebSocketStream", "EventSource", "WebTransport",
    "importScripts", "Worker", "SharedWorker", "indexedDB", "caches", "BroadcastChannel",
    ...(network ? [] : ["fetch", "Request"])];
  const global = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (self));
  for (const name of names) {
    for (let scope = global; scope; scope = Object.getPrototypeOf(scope)) {
      if (Object.prototype.hasOwnProperty.call(scope, name)) {
        try {
          delete scope[name];
        } catch {
          // not configurable: the policy still holds
        }
      }
    }
  }
}

/** @param {DataFile[] | undefined} files  the conversation's files, read-only under /mnt/data */
function mount(files) {
  const { FS } = python();
  for (const { name, data } of files ?? []) {
    const path = `${DATA}/${name}`;
    try {
      FS.chmod(path, 0o644); // a copy the last run may have changed is put back as it was
    } catch {
      // not there yet
    }
    FS.writeFile(path, new Uint8Array(data));
    FS.chmod(path, 0o444);
  }
}

/** @param {import("./messages.js").RunRequest & {id: number}} request */
async function run({ id, code, files, tools: catalog }) {
  /** @type {CellResult} */
  let result;
  try {
    if (!notebook) throw new Error("the notebook is not up");
    mount(files);
    codeTools?.define(JSON.stringify(catalog ?? []));
    const loading = await loadImports(code);
    const proxy = await notebook.run(code);
    const { written, ...ran } = /** @type {Ran} */ (proxy.toJs({ dict_converter: Object.fromEntries }));
    proxy.destroy();
    const { FS } = python();
    result = { ...ran, stderr: loading + ran.stderr, memory: 0,
               outputs: written.map((name) => ({ name, data: FS.readFile(`${OUTPUTS}/${name}`) })) };
  } catch (err) {
    result = { stdout: "", stderr: "", value: null, error: said(err), outputs: [], memory: 0 };
  }
  // Pyodide's Emscripten module is not in its types: its heap is how much memory Python holds now.
  const emscripten = /** @type {{_module?: {HEAP8?: Int8Array}} | null} */ (/** @type {unknown} */ (py));
  result.memory = emscripten?._module?.HEAP8?.length ?? 0;
  send({ type: "result", id, result }, result.outputs.map((o) => o.data.buffer));
}

/**
 * pydantic and pycore, from the wheels the page sent (the site's own files), then sandbox_py's tool host.
 * @param {import("./messages.js").ToolHostRequest & {id: number}} request
 */
async function startToolHost({ id, wheels }) {
  /** @type {{error?: string}} */
  let result = {};
  try {
    tools ??= (async () => {
      const up = python();
      const sitePackages = up.runPython("import site; site.getsitepackages()[0]");
      for (const wheel of wheels) up.unpackArchive(wheel, "wheel", { extractDir: sitePackages });
      return /** @type {ToolHost} */ (up.pyimport("sandbox_py.tools").ToolHost());
    })();
    await tools;
  } catch (err) {
    tools = null;
    result = { error: said(err) };
  }
  send({ type: "result", id, result });
}

/** @param {import("./messages.js").ToolsRequest & {id: number}} request */
async function defineTools({ id, set, source }) {
  /** @type {import("./messages.js").ToolsResult} */
  let result;
  try {
    if (!tools) throw new Error("the Python tools' host is not loaded");
    result = JSON.parse((await tools).define(set, source));
  } catch (err) {
    result = { error: said(err) };
  }
  send({ type: "result", id, result });
}

/** @param {import("./messages.js").CallRequest & {id: number}} request */
async function callTool({ id, set, name, arguments: args, call_id }) {
  /** @type {import("./messages.js").CallResult} */
  let result;
  try {
    if (!tools) throw new Error("the Python tools' host is not loaded");
    result = JSON.parse(await (await tools).call(set, name, JSON.stringify(args ?? {}), call_id));
  } catch (err) {
    result = { content: [{ type: "text", text: `${name} failed in the sandbox: ${said(err)}` }], is_error: true };
  }
  send({ type: "result", id, result });
}
})();
