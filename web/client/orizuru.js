// Orizuru's agent for any web page: the core (Python, in a Web Worker) behind a small API. The chat app
// talks to its core through this module too; a page that embeds the agent imports it from the site:
//
//   import { createAgent } from "https://your.host/orizuru/orizuru.js";
//   const agent = createAgent({ profile: { vendor: "openai", model: "gpt-4o-mini", apiKey } });
//   agent.registerTool({ name: "roll_dice", description: "Roll a die", inputSchema: { type: "object",
//     properties: { sides: { type: "integer" } } } }, ({ sides = 6 }) => 1 + Math.floor(Math.random() * sides));
//   await agent.connect("https://example.com/mcp");          // MCP servers by URL (they must allow CORS)
//   const result = await agent.run("Roll a d20", { onEvent: (ev) => console.log(ev) });
//   agent.stop();                                           // Stop the running turn
//
// Events and errors are the core's contract (docs/PROTOCOL.md; `dist/contract.schema.json`): a failed
// call rejects with an Error carrying `code` (one of ERROR_CODES), `message` and `details`.
// The API key goes to the worker with each run and from there only to the vendor.

import { WorkerClient } from "../protocol.js";

export { ERROR_CODES, LOOP_EVENT_TYPES, PART_TYPES, STREAM_EVENT_TYPES, VENDORS } from "../contract.js";

/**
 * @typedef {{vendor: string, model: string, apiKey?: string, baseUrl?: string}} Profile
 * @typedef {{name: string, description?: string, inputSchema?: Record<string, unknown>}} ToolDefinition
 * @typedef {(args: Record<string, unknown>, call: {id: string, name: string}) => unknown} ToolHandler
 *   returns a string, a JSON-able value, or MCP content items ([{type: "text", text}, ...]); a throw is an
 *   error result the model sees
 * @typedef {import("../types/contract").ApprovalEvent} ApprovalAsk   {call_id, name, original_name, arguments,
 *   source, reason?}
 * @typedef {{pyodide: string, wheels: string[], later?: string[], worker: string}} Boot   what the build writes to
 *     boot.json (`later`: wheels installed once the core is ready)
 * @typedef {{version: string, python: string, methods: string[]}} CoreInfo   what the core says of itself at boot
 * @typedef {import("../types/contract").Method} Method
 * @typedef {import("../types/contract").Message} Message
 * @typedef {import("../types/contract").CoreEvent} CoreEvent
 * @typedef {import("../types/contract").ApprovalEvent} ApprovalEvent
 * @typedef {import("../types/contract").PageToolEvent} PageToolEvent
 */
/**
 * @template T
 * @typedef {import("../protocol.js").Call<T>} Call
 */

/** The site the library was loaded from: its files live in `assets/` under it (this code may sit in a shared
 * chunk, `assets/chunks/`, so the site is what comes before the last `/assets/`). */
const SITE = siteOf(import.meta.url);

/** @param {string} moduleUrl */
function siteOf(moduleUrl) {
  const at = moduleUrl.lastIndexOf("/assets/");
  return at >= 0 ? moduleUrl.slice(0, at + 1) : new URL("../", moduleUrl).href;
}

/** @param {ConstructorParameters<typeof Agent>[0]} options */
export function createAgent(options = {}) {
  return new Agent(options);
}

export class Agent {
  /**
   * @param {{profile?: Profile | null, site?: string, boot?: Boot | null, onStage?: (stage: string, detail: unknown) => void,
   *   onLog?: (level: string, message: string) => void,
   *   approve?: (ask: ApprovalAsk) => Promise<"allow"|"deny"|"always">|"allow"|"deny"|"always"}} options
   *   `approve` answers an MCP tool that asks before it runs (default: deny); the page's own tools
   *   (registerTool) run without asking, as the page chose them.
   */
  constructor({ profile = null, site = SITE, boot = null, onStage = () => {}, onLog = () => {},
                approve = () => "deny" } = {}) {
    this.profile = profile;
    this.site = site;
    this.approve = approve;
    /** @type {Map<string, {definition: ToolDefinition, handler: ToolHandler}>} */
    this.pageTools = new Map();
    /** @type {Message[]} The conversation so far: each run adds its question and the core's messages. */
    this.messages = [];
    /** @type {Set<string>} */
    this.servers = new Set();
    /** @type {Call<import("../types/contract").Result<"chat.run">> | null} */
    this.running = null;
    /** @type {CoreInfo | null} */
    this.info = null;
    /** @type {WorkerClient | undefined} */
    this.client = undefined;
    /** Resolves with the core's info ({version, python, methods}) once Python is up; rejects if it fails. */
    this.ready = (boot ? Promise.resolve(boot) : fetchBoot(site)).then((b) => this.#boot(b, onStage, onLog));
    this.ready.catch(() => {}); // a page that never awaits it still sees the failure on its first call
  }

  /** The core's method names (empty until it is ready). */
  get methods() {
    return this.info?.methods ?? [];
  }

  /** Whether the core is up now (`ready` is the promise of it). */
  get isReady() {
    return this.info !== null;
  }

  /**
   * @param {Boot} boot
   * @param {import("../protocol.js").StageHandler} onStage
   * @param {import("../protocol.js").LogHandler} onLog
   * @returns {Promise<CoreInfo>}
   */
  async #boot(boot, onStage, onLog) {
    const worker = new Worker(new URL(boot.worker, this.site), { type: "module", name: "pycore" });
    this.client = new WorkerClient(worker, { onStage, onLog });
    this.info = /** @type {CoreInfo} */ (await this.client.boot({ base: this.site, pyodide: boot.pyodide, wheels: boot.wheels,
                                         later: boot.later ?? [] }));
    return this.info;
  }

  /**
   * Call a core method (docs/PROTOCOL.md) once the core is ready; `onEvent` gets its streamed events.
   * @template {Method} M
   * @param {M} method
   * @param {import("../types/contract").Params<M>} [params]
   * @param {import("../protocol.js").EventHandler} [onEvent]
   * @returns {Call<import("../types/contract").Result<M>>}
   */
  call(method, params = /** @type {import("../types/contract").Params<M>} */ ({}), onEvent = () => {}) {
    if (this.client && this.isReady) return this.client.call(method, params, onEvent);
    /** @type {number | null} */
    let callId = null;
    const pending = this.ready.then(() => {
      const call = readyClient(this.client).call(method, params, onEvent);
      callId = call.id;
      return call;
    });
    return /** @type {Call<import("../types/contract").Result<M>>} */ (
      Object.defineProperty(pending, "id", { get: () => callId }));
  }

  /** @param {number | null | undefined} id */
  cancel(id) {
    if (id != null) this.client?.cancel(id);
  }

  /**
   * A tool of this page: the model may call it during `run`; `handler` runs here, in the page.
   * @param {ToolDefinition} definition
   * @param {ToolHandler} handler
   */
  registerTool(definition, handler) {
    if (!definition?.name || typeof handler !== "function") {
      throw new TypeError("registerTool({name, description, inputSchema}, handler): a name and a function");
    }
    this.pageTools.set(definition.name, {
      definition: { name: definition.name, description: definition.description ?? "",
                    inputSchema: definition.inputSchema ?? { type: "object" } },
      handler,
    });
  }

  /** The page tools' definitions, as `chat.run` takes them (`tools.page`). */
  pageToolDefinitions() {
    return [...this.pageTools.values()].map((t) => t.definition);
  }

  /**
   * Answer a `page_tool` event: run the registered handler and send its result to the core (`runId`: the `run_id`
   * of the chat.run that asked, when it named one; several runs may go on at once).
   * @param {PageToolEvent} ev
   * @param {string} [runId]
   */
  async answerPageTool(ev, runId) {
    const tool = this.pageTools.get(ev.name);
    /** @type {Record<string, unknown>[]} */
    let content;
    let isError = false;
    try {
      if (!tool) throw new Error(`this page has no tool named ${ev.name}`);
      content = toContent(await tool.handler(ev.arguments ?? {}, { id: ev.call_id, name: ev.name }));
    } catch (err) {
      content = [{ type: "text", text: String(/** @type {{message?: unknown}} */ (Object(err)).message ?? err) }];
      isError = true;
    }
    await this.call("chat.page_tool_result", { ...(runId ? { run_id: runId } : {}), call_id: ev.call_id, content,
                                               is_error: isError });
  }

  /**
   * Connect an MCP server by URL (streamable HTTP or SSE); its tools join the next runs.
   * @param {string} url
   * @param {{ headers?: Record<string, string> }} [options]
   */
  async connect(url, { headers = {} } = {}) {
    const id = `url:${url}`;
    const info = await this.call("mcp.connect", { id, url, headers });
    this.servers.add(id);
    return info;
  }

  /** @param {string} url */
  async disconnect(url) {
    const id = `url:${url}`;
    this.servers.delete(id);
    await this.call("mcp.disconnect", { id });
  }

  /**
   * One turn: `input` (text) is added to the conversation and the agent answers, calling tools as needed.
   * Resolves with the run's result ({stop_reason, error?, usage...}); `agent.messages` then holds the turn.
   * @param {string} input
   * @param {{system?: string, onEvent?: (ev: CoreEvent | {type: "log", message: string}) => void,
   *   limits?: import("../types/contract").RunLimits}} [options]
   */
  async run(input, { system, onEvent = () => {}, limits } = {}) {
    if (!this.profile?.vendor || !this.profile?.model) throw new TypeError("the agent needs a profile: {vendor, model}");
    if (this.running) throw new Error("a turn is already running: stop() it or wait for it");
    /** @type {Message} */
    const question = { role: "user", parts: [{ type: "text", text: String(input) }] };
    const { vendor, model, apiKey, baseUrl } = this.profile;
    /** @type {import("../types/contract").Params<"chat.run">} */
    /** @type {Message[]} */
    const conversation = [...this.messages, question];
    const params = {
      provider: { vendor, ...(apiKey ? { api_key: apiKey } : {}), ...(baseUrl ? { base_url: baseUrl } : {}) },
      model, messages: /** @type {[Message, ...Message[]]} */ (conversation),
      tools: { page: this.pageToolDefinitions(), mcp: [...this.servers] },
      ...(system ? { system } : {}), ...(limits ? { limits } : {}),
    };
    const added = [question];
    /** @param {CoreEvent} ev */
    const handle = (ev) => {
      if (ev.type === "page_tool") this.answerPageTool(ev).catch((err) => onEvent({ type: "log", message: String(err) }));
      else if (ev.type === "approval") this.#decide(ev);
      else if (ev.type === "message") added.push(ev.message);
      onEvent(ev);
    };
    const call = this.call("chat.run", params, handle);
    this.running = call;
    try {
      const result = await call;
      this.messages.push(...added);
      return result;
    } finally {
      this.running = null;
    }
  }

  /** @param {ApprovalEvent} ask */
  async #decide(ask) {
    /** @type {"allow" | "deny" | "always"} */
    let decision = "deny";
    try {
      decision = await this.approve(ask);
    } finally {
      await this.call("chat.approve", { call_id: ask.call_id, decision: decision ?? "deny" });
    }
  }

  /** Stop the running turn: it ends with stop_reason "stopped", keeping what arrived. */
  stop() {
    this.cancel(this.running?.id);
  }
}

/**
 * @param {string} site
 * @returns {Promise<Boot>}
 */
async function fetchBoot(site) {
  const response = await fetch(new URL("boot.json", site));
  if (!response.ok) throw new Error(`${new URL("boot.json", site)}: HTTP ${response.status}: is this an Orizuru site?`);
  return response.json();
}

/**
 * A handler's return value as MCP content items.
 * @param {unknown} value
 * @returns {Record<string, unknown>[]}
 */
function toContent(value) {
  if (Array.isArray(value) && value.every((item) => item && typeof item === "object" && typeof item.type === "string")) {
    return value;
  }
  const text = typeof value === "string" ? value : JSON.stringify(value ?? null);
  return [{ type: "text", text }];
}

/**
 * The worker's client, there once `ready` resolved.
 * @param {WorkerClient | undefined} client
 */
function readyClient(client) {
  if (!client) throw new Error("the core's worker is not started");
  return client;
}
