/**
 * The Tools dialog: MCP servers (by URL + headers, or the relay's own in one click), their tools,
 * resources and prompts, per-tool on/off and approval policy; and the Python tools editor.
 *
 *   const panel = new ToolsPanel({core, ready, coreReadyNow, settings, relayToken, notify, interpreter, inspector,
 *                                 onAttach})   inspector: the traffic inspector (app/traffic.js), per server
 *                                     onAttach(resource, contents, parts): the user attached a resource
 *                                     (mcp.read_resource); it goes with the next message
 *   panel.open()                      show it (lists the relay's servers when served by the relay)
 *   await panel.runParams()           {tools, policy} for chat.run (docs/PROTOCOL.md); the Python tools are in
 *                                     tools.page, with source `python:<profile id>`; and `code`, the same MCP
 *                                     tools as code mode's catalog (web/sandbox/code_mode.js)
 *   panel.samplingLimits()            what a server's sampling request may use: {sampling_max_tokens,
 *                                     sampling_max_input_chars} (chat.run's limits)
 *   panel.profileChanged(profile)     offer that profile's Python tools
 *
 * Python tools: the profile's source text (Tools → Python tools); each public function is a tool. They run in
 * the code interpreter's sandbox (web/sandbox/), never in the core's worker, so the keys and tokens are out of
 * their reach. Saving defines them there (the definitions, or the line with the problem); the definitions are
 * kept with the source (orizuru.pythonToolDefs.<profile id>) so that after a reload they are offered at once, and
 * the sandbox starts only when the model calls one.
 *   panel.prompts()                   connected servers' prompts, for the composer's slash commands
 *   await panel.connected(id)         whether that server is connected, once its connection at load has settled
 *
 * Remembered as preferences (web/store/prefs.js; nothing secret): server URLs with header NAMES only, and
 * each tool's on/off and approval. Header values (tokens) stay in memory; such a server is reconnected by hand.
 *
 * A tool's choices are keyed by its server's id (`url:<the URL the user added>` or `relay:<the relay's
 * name>`: never a name the server gives itself) and the tool's own name (not the name the model sees).
 * "Always allow" keeps the fingerprint of the definition it was given for (pycore.agent.approval): when
 * the server changes the tool, the choice no longer holds and the tool asks again. Choices kept by older
 * builds under the bare tool name (orizuru.toolPrefs) covered every server's tool of that name; they are
 * dropped, so those tools ask once more.
 *
 *   panel.alwaysAllow(approvalEvent)  "Always allow this tool" pressed on a tool card
 *
 * Each server has a "Trust this server" switch (off by default; kept in the preferences by server id): a
 * trusted server's tools run without asking unless they say they are destructive or were added or
 * changed since the connection (pycore.agent.approval). Opening the dialog and starting a run re-read
 * the servers (mcp.list), so a tool a server added by notifications/tools/list_changed shows up, marked
 * new; it asks before its first run. A server a call found gone is shown "unreachable" with the core's sentence
 * and a Reconnect button; its tools are left out of runs until it is connected again. "Roots" lists the folders (file:// URIs) servers may know about: none unless
 * the user adds some (kept in orizuru.mcpRoots; the core answers roots/list with them). A server's log messages (notifications/message, the last 100) are listed
 * under it, newest first, as text. "Find a server in the MCP registry" searches a registry (app/registry_search.js).
 */

import { byId, h } from "./dom.js";
import { messageOf } from "./error_notice.js";
import { onLanguageChange, t } from "./i18n.js";
import { signIn } from "./oauth.js";
import { RegistrySearch } from "./registry_search.js";
import { listRelayServers, relayServerUrl } from "./relay.js";
import { isLocalURL } from "../mcp_app/policy.js";
import { codeCatalog } from "../sandbox/code_mode.js";
import { PREFS, prefs } from "../store/prefs.js";

/**
 * @typedef {import("../types/contract").ServerDescription} ServerDescription
 * @typedef {import("../types/contract").Diagnosis} Diagnosis
 * @typedef {import("../types/contract").PageTool} PageTool
 * @typedef {{uri: string, name?: string | null}} McpResource   one of a server's resources (mcp.list)
 * @typedef {{name: string, description?: string | null}} McpPrompt   one of a server's prompts (mcp.list)
 * @typedef {"connecting" | "connected" | "disconnected" | "error" | "unreachable"} ServerStatus
 * @typedef {{id: string, url: string, headers: Record<string, string>, headerNames?: string[],
 *   status: ServerStatus, relay: string | null, info?: ServerDescription | null, error?: string | null,
 *   advice?: Diagnosis | null, needsSignIn?: boolean}} Connection   a server the user added, as the panel shows it
 * @typedef {{enabled?: boolean, policy?: string, fingerprint?: string}} ToolChoice   kept per server and tool
 * @typedef {{source: string, tool: string, policy: string, fingerprint?: string}} PolicyEntry   chat.run's policy
 * @typedef {{defineTools: (set: string, source: string) => Promise<PageTool[]>,
 *   useTools: (set: string, source: string) => unknown}} PythonTools   the code interpreter, as the panel uses it
 */

// The error codes (pycore/contract.py) after which "Sign in" is the way on: OAuth, or sign in for more scope.
const SIGN_IN_CODES = new Set(["mcp_auth_required", "mcp_insufficient_scope"]);
const FOLLOW_MS = 1000; // how often the open panel asks the worker for the servers' tool lists (no network)
const POLICIES = ["ask", "allow", "deny"];
/** @type {Record<"samplingMaxTokens" | "samplingMaxInputChars", {name: string, fallback: number}>} */
const SAMPLING_LIMITS = { // prefs key -> chat.run's limits field, and its value unless the user changed it
  samplingMaxTokens: { name: "sampling_max_tokens", fallback: 1024 },
  samplingMaxInputChars: { name: "sampling_max_input_chars", fallback: 100_000 },
};

/**
 * Which MCP revision a connected server speaks: 2026-07-28 stands alone per request; older ones keep a session.
 * @param {{protocol_version?: string | null} | null | undefined} info
 */
function protocolBadge(info) {
  const version = info?.protocol_version;
  if (!version) return "";
  const hint = version >= "2026-07-28" ? "tools.protocolModern" : "tools.protocolOlder";
  return h("span", { className: "protocol-badge", title: t(hint, { version }) }, t("tools.protocol", { version }));
}

export class ToolsPanel {
  /**
   * @param {{core: import("../client/orizuru.js").Agent, ready: Promise<unknown>, coreReadyNow: () => boolean,
   *   settings: import("./settings.js").Settings, relayToken: string | null, notify: import("./notify.js").Notify,
   *   interpreter: PythonTools, inspector?: import("./traffic.js").TrafficInspector | null,
   *   onAttach?: (resource: McpResource, contents: unknown[], parts: import("../types/contract").Part[]) => void}} parts
   */
  constructor({ core, ready, coreReadyNow, settings, relayToken, notify, interpreter, inspector = null,
                onAttach = () => {} }) {
    onLanguageChange(() => this.render());
    this.core = core;
    this.ready = ready;
    this.coreReadyNow = coreReadyNow;
    this.settings = settings;
    this.relayToken = relayToken;
    this.notify = notify;
    this.interpreter = interpreter;
    this.inspector = inspector;
    /** @type {Map<string, Connection>} */
    this.servers = new Map(); // id -> {id, url, headers, status, info, error, advice, relay}
    /** @type {import("./relay.js").RelayServer[]} */
    this.relayServers = [];
    /** @type {string | null} */
    this.relayError = null;
    /** @type {Record<string, ToolChoice | undefined>} */
    this.prefs = prefs.getJSON(PREFS.toolChoices, {});
    /** @type {Set<string>} */
    this.trusted = new Set(prefs.getJSON(PREFS.trustedServers, []).filter((/** @type {unknown} */ id) => typeof id === "string"));
    prefs.remove(PREFS.oldToolChoices); // keyed by bare tool names, from before choices were per server
    /** @type {{id: string | null, tools: PageTool[]}} */
    this.python = { id: null, tools: [] };
    /** @type {Promise<boolean>} */
    this.pythonPending = Promise.resolve(false);
    /** @type {Set<string>} */
    this.openLogs = new Set(); // the servers whose log the user opened
    this.onAttach = onAttach; // (resource, contents, parts): the user attached a resource it read
    this.onPrompt = null;
    /** @type {Promise<unknown> | undefined} */
    this.signingOut = undefined; // a forgotten server's sign-in being dropped from the worker's vault
    /** @type {ReturnType<typeof setInterval> | undefined} */
    this.following = undefined;
    this.dialog = byId("tools-dialog", HTMLDialogElement);
    this.list = byId("mcp-servers");
    this.relayList = byId("relay-servers");
    /** @type {{uri: string, name?: string}[]} */
    this.roots = prefs.getJSON(PREFS.mcpRoots, []);
    this.#wire();
    // A registry's remote connects as a URL the user added; one that needs a header or a URL variable is put in
    // the Add server form for the user to finish.
    this.registry = new RegistrySearch({
      core, ready,
      connect: (/** @type {string} */ url) => this.connect({ id: `url:${url}`, url }),
      fillIn: (/** @type {string} */ url, /** @type {string[]} */ headerNames) => {
        byId("mcp-url", HTMLInputElement).value = url;
        byId("mcp-headers", HTMLTextAreaElement).value = headerNames.map((name) => `${name}: `).join("\n");
        byId("mcp-url", HTMLInputElement).focus();
      },
    });
  }

  #wire() {
    byId("tools-close").addEventListener("click", () => this.dialog.close());
    // While the panel is open it follows the servers' tool lists: a tool a server adds (list_changed) shows
    // up, marked new, without closing and opening again. Drawn again only when a list changed, so a choice
    // being made in a select is not disturbed.
    this.dialog.addEventListener("close", () => clearInterval(this.following));
    byId("mcp-add").addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.#addFromForm();
    });
    byId("python-save").addEventListener("click", () => this.#savePython());
    byId("roots-save").addEventListener("click", () => this.#saveRoots());
    this.#readSaved();
    for (const [id, key] of /** @type {const} */ ([["sampling-budget", "samplingMaxTokens"],
                                                 ["sampling-input", "samplingMaxInputChars"]])) {
      const field = byId(id, HTMLInputElement);
      field.value = String(this.samplingLimits()[SAMPLING_LIMITS[key].name]);
      field.addEventListener("change", () => {
        if (field.validity.valid && field.value) prefs.set(PREFS[key], String(Math.round(Number(field.value))));
      });
    }
    byId("roots-list", HTMLTextAreaElement).value = this.roots.map((r) => [r.uri, r.name].filter(Boolean).join(" ")).join("\n");
    /** @type {Map<string, Promise<Connection>>} server id -> its last connection, under way or settled */
    this.connecting = new Map();
    // The roots go to the core before any server connects, so its first roots/list gets them.
    this.restored = this.ready.then(async () => {
      if (this.roots.length) await this.core.call("mcp.set_roots", { roots: this.roots }).catch(() => {});
      this.#reconnectSaved();
    }, () => {});
  }

  /** What a server's sampling request may use (Tools): the most tokens the model may write (1024 unless changed)
   *  and the most characters of text it may send the model (100,000): chat.run's limits.sampling_max_*. */
  samplingLimits() {
    const limits = /** @type {[keyof typeof SAMPLING_LIMITS, {name: string, fallback: number}][]} */ (
      Object.entries(SAMPLING_LIMITS));
    return Object.fromEntries(limits.map(([key, { name, fallback }]) => {
      const saved = Number(prefs.get(PREFS[key]));
      return [name, Number.isInteger(saved) && saved > 0 ? saved : fallback];
    }));
  }

  // ------------------------------------------------------------------ roots

  /** "Save roots": one file:// URI per line, a name after a space; the core tells the connected servers. */
  async #saveRoots() {
    const status = byId("roots-status");
    status.classList.remove("error");
    /** @type {{uri: string, name?: string}[]} */
    const roots = [];
    const lines = byId("roots-list", HTMLTextAreaElement).value.split("\n");
    for (const [i, line] of lines.entries()) {
      if (!line.trim()) continue;
      const [uri, ...name] = line.trim().split(/\s+/);
      if (!uri.startsWith("file://")) {
        status.textContent = t("tools.rootsBad", { line: i + 1 });
        status.classList.add("error");
        return;
      }
      roots.push(name.length ? { uri, name: name.join(" ") } : { uri });
    }
    try {
      await this.ready;
      await this.core.call("mcp.set_roots", { roots });
      this.roots = roots;
      prefs.setJSON(PREFS.mcpRoots, roots);
      status.textContent = t("tools.rootsSaved", { count: roots.length });
    } catch (err) {
      status.textContent = messageOf(err);
      status.classList.add("error");
    }
  }

  // ------------------------------------------------------------------ dialog

  async open() {
    await this.#refresh();
    this.render();
    if (!this.dialog.open) {
      this.dialog.showModal();
      clearInterval(this.following);
      this.following = setInterval(() => this.#follow(), FOLLOW_MS);
    }
    if (this.relayToken) await this.#loadRelay();
  }

  render() {
    const relaySection = byId("relay-section");
    relaySection.hidden = !this.relayToken;
    if (this.relayToken) {
      if (this.relayError) this.relayList.replaceChildren(h("li", { className: "error" }, t("tools.relayFailed", { message: this.relayError })));
      else if (!this.relayServers.length) this.relayList.replaceChildren(h("li", { className: "hint" }, t("tools.relayNone")));
      else this.relayList.replaceChildren(...this.relayServers.map((s) => this.#relayItem(s)));
    }
    this.list.replaceChildren(...[...this.servers.values()].filter((s) => !s.relay).map((s) => this.#serverItem(s)));
  }

  async #follow() {
    const lists = () => JSON.stringify([...this.servers.values()].map((s) => [s.status, s.error ?? null,
                                                                              s.info?.tools ?? null,
                                                                              s.info?.log?.at(-1)?.time ?? null]));
    const before = lists();
    await this.#refresh();
    if (this.dialog.open && lists() !== before) this.render();
  }

  /** The connected servers' tools as the worker has them now (a list_changed may have added some), and whether
   *  a call found the server gone since ("unreachable", with the core's sentence: it then takes a Reconnect). */
  async #refresh() {
    /**
     * @param {Connection | undefined} s
     * @returns {s is Connection}
     */
    const live = (s) => s !== undefined && (s.status === "connected" || s.status === "unreachable");
    if (!this.coreReadyNow?.() || ![...this.servers.values()].some(live)) return;
    try {
      const { servers } = /** @type {import("../types/contract").ServerList} */ (await this.core.call("mcp.list", {}));
      for (const info of servers) {
        const conn = this.servers.get(info.id);
        if (!live(conn)) continue;
        conn.info = info;
        conn.status = info.status === "unreachable" ? "unreachable" : "connected";
        conn.error = info.problem ?? null;
      }
    } catch {
      // the list as it was still holds; the run itself names what is wrong
    }
  }

  /**
   * @param {string} id
   * @param {boolean} on
   */
  #setTrusted(id, on) {
    if (on) this.trusted.add(id);
    else this.trusted.delete(id);
    prefs.setJSON(PREFS.trustedServers, [...this.trusted]);
  }

  async #loadRelay() {
    try {
      this.relayServers = await listRelayServers(this.relayToken ?? "");
      this.relayError = null;
    } catch (err) {
      this.relayError = messageOf(err);
    }
    this.render();
  }

  /** @param {import("./relay.js").RelayServer} server */
  #relayItem(server) {
    const id = `relay:${server.name}`;
    const conn = this.servers.get(id);
    const item = conn ? this.#serverItem(conn, server.name) : h("li", { className: "server", dataset: { id } },
      h("div", { className: "server-head" },
        h("strong", {}, server.name),
        h("code", { className: "command" }, [server.command, ...(Array.isArray(server.args) ? server.args : [])].join(" ")),
        h("button", { type: "button", className: "primary", "aria-label": `${t("tools.connect")} ${server.name}`,
                      onclick: () => this.connect({ id, url: relayServerUrl(server), relay: server.name,
                                                    headers: { Authorization: `Bearer ${this.relayToken}` } }) },
          t("tools.connect"))));
    return item;
  }

  /**
   * @param {Connection} conn
   * @param {string | null} [label]
   */
  #serverItem(conn, label = null) {
    const name = label ?? conn.info?.server?.name ?? conn.url;
    const head = h("div", { className: "server-head" },
      h("strong", {}, name),
      label ? null : h("code", { className: "url" }, conn.url),
      h("span", { className: `badge status-${conn.status}` }, t(`tools.status.${conn.status}`)));
    if (conn.status === "connected") {
      head.append(protocolBadge(conn.info));
      head.append(h("button", { type: "button", "aria-label": `${t("tools.traffic")}: ${name}`,
                                onclick: () => this.inspector?.open(conn.id, name) }, t("tools.traffic")));
      head.append(h("button", { type: "button", "aria-label": `${t("tools.disconnect")} ${name}`,
                                onclick: () => this.disconnect(conn.id) }, t("tools.disconnect")));
    } else if (conn.status !== "connecting") {
      const again = t(conn.status === "unreachable" ? "tools.reconnect" : "tools.connect");
      head.append(h("button", { type: "button", "aria-label": `${again} ${name}`,
                                onclick: () => this.connect(conn) }, again));
      if (!conn.relay) {
        head.append(h("button", { type: "button", className: "icon", "aria-label": `${t("nav.delete")} ${name}`,
                                  onclick: () => this.#forget(conn.id) }, "×"));
      }
    }
    const trust = h("input", { type: "checkbox", className: "trust", "aria-label": t("tools.trustLabel", { name }) });
    trust.checked = this.trusted.has(conn.id);
    trust.addEventListener("change", () => this.#setTrusted(conn.id, trust.checked));
    head.append(h("label", { className: "trust-server" }, trust, t("tools.trust")));
    const item = h("li", { className: "server", dataset: { id: conn.id, status: conn.status } }, head);
    if (conn.error) {
      item.append(h("p", { className: "error", role: "alert" }, conn.error));
      if (conn.needsSignIn) {
        item.append(h("button", { type: "button", className: "primary", onclick: () => this.#signIn(conn) }, t("tools.signIn")));
      }
      if (conn.advice) item.append(h("div", { className: "doctor" }, h("h4", {}, t("tools.doctor")), doctorNodes(conn.advice)));
    }
    if (conn.status === "connected" && conn.info) item.append(this.#capabilities(conn, conn.info));
    if (conn.status === "connected" && conn.info?.log?.length) item.append(this.#log(conn));
    return item;
  }

  /**
   * The server's log messages (notifications/message), newest first, as text; open stays open while it grows.
   * @param {Connection} conn
   */
  #log(conn) {
    const entries = [...(conn.info?.log ?? [])].reverse();
    const details = h("details", { className: "server-log" },
      h("summary", {}, t("tools.log", { count: entries.length })),
      h("ol", { "aria-label": t("tools.logOf", { name: conn.info?.server?.name ?? conn.url }) }, entries.map((e) =>
        h("li", { dataset: { level: e.level } },
          h("time", { datetime: new Date(e.time * 1000).toISOString() }, new Date(e.time * 1000).toLocaleTimeString()),
          h("span", { className: "log-level" }, e.level),
          e.logger ? h("span", { className: "log-logger" }, e.logger) : null,
          h("span", { className: "log-data" }, typeof e.data === "string" ? e.data : JSON.stringify(e.data))))));
    details.open = this.openLogs.has(conn.id);
    details.addEventListener("toggle", () => (details.open ? this.openLogs.add(conn.id) : this.openLogs.delete(conn.id)));
    return details;
  }

  /**
   * @param {Connection} conn
   * @param {ServerDescription} info   its tools, resources and prompts
   */
  #capabilities(conn, info) {
    const { tools = [] } = info;
    const resources = /** @type {McpResource[]} */ (info.resources ?? []);
    const prompts = /** @type {McpPrompt[]} */ (info.prompts ?? []);
    const box = h("div", { className: "capabilities" });
    if (tools.length) {
      box.append(h("h4", {}, t("tools.tools")), h("ul", { className: "tool-list" }, tools.map((tool) => {
        const name = tool.original_name ?? tool.name;
        const key = prefKey(conn.id, name);
        const pref = this.prefs[key] ?? {};
        const enabled = h("input", { type: "checkbox", "aria-label": t("tools.enabled", { name }) });
        enabled.checked = pref.enabled !== false;
        enabled.addEventListener("change", () => this.#setPref(key, { enabled: enabled.checked }));
        const policy = h("select", { "aria-label": t("tools.policy", { name }) },
          POLICIES.map((p) => h("option", { value: p }, t(`tools.policy.${p}`))));
        const changed = pref.policy === "allow" && pref.fingerprint !== tool.fingerprint;
        policy.value = changed ? "ask" : pref.policy ?? tool.policy ?? "ask";
        policy.addEventListener("change", () => this.#setPref(key, { policy: policy.value, fingerprint: tool.fingerprint }));
        const isNew = tool.new === true && !(pref.policy === "allow" && !changed);
        const note = changed ? t("tools.changed") : isNew ? t("tools.new") : tool.description ?? "";
        // MCP Apps: a tool with a view shows it on its card; one kept for views is never offered to the model.
        const view = tool.views_only ? t("tools.viewsOnly") : tool.ui ? t("tools.hasView") : null;
        const marks = { ...(isNew ? { new: "true" } : {}), ...(tool.views_only ? { viewsOnly: "true" } : {}) };
        return h("li", { dataset: { tool: name, ...marks } },
          enabled, h("span", { className: "tool-name" }, h("span", {}, name),
                      view ? h("span", { className: "badge tool-view" }, view) : null),
          h("span", { className: changed || isNew ? "hint changed" : "hint" }, note),
          policy);
      })));
    }
    if (resources.length) {
      box.append(h("h4", {}, t("tools.resources")), h("ul", { className: "resource-list" }, resources.map((r) => h("li", {},
        h("span", {}, r.name ?? r.uri), " ", h("code", {}, r.uri),
        h("button", { type: "button", "aria-label": `${t("tools.attach")} ${r.name ?? r.uri}`,
                      onclick: () => this.#attachResource(conn, r) }, t("tools.attach"))))));
    }
    if (prompts.length) {
      box.append(h("h4", {}, t("tools.prompts")), h("ul", {}, prompts.map((p) => h("li", {},
        h("code", {}, `/${p.name}`), " ", h("span", { className: "hint" }, p.description ?? "")))));
    }
    return box;
  }

  /**
   * @param {string} key
   * @param {ToolChoice} change
   */
  #setPref(key, change) {
    this.prefs[key] = { ...(this.prefs[key] ?? {}), ...change };
    prefs.setJSON(PREFS.toolChoices, this.prefs);
  }

  /**
   * "Always allow this tool" on a card: that server's tool, as it is defined now (the approval event).
   * @param {{source?: string | null, original_name?: string | null, fingerprint?: string | null}} [ask]
   */
  alwaysAllow({ source, original_name: name, fingerprint } = {}) {
    if (!source?.startsWith("mcp:") || !name || !fingerprint) return; // Python and page tools: this run only
    this.#setPref(prefKey(source.slice("mcp:".length), name), { policy: "allow", fingerprint });
    if (this.dialog.open) this.render();
  }

  /**
   * The `ui://` view of a connected server's tool (MCP Apps), or null.
   * @param {string} serverId
   * @param {string} toolName
   */
  viewOf(serverId, toolName) {
    const tool = this.servers.get(serverId)?.info?.tools?.find((t) => t.original_name === toolName);
    return tool?.ui ?? null;
  }

  /** Whether a connected server runs on this machine: a stdio server of the relay, or a URL on a loopback host
   *  (an --allow-remote server of the relay is elsewhere, though the relay is here). Unknown: not local.
   * @param {string} serverId */
  isLocal(serverId) {
    const conn = this.servers.get(serverId);
    if (!conn) return false;
    if (conn.relay) return this.relayServers.find((s) => s.name === conn.relay)?.kind === "stdio";
    return isLocalURL(conn.url);
  }

  /**
   * The user's choices for one server's tools and its trust: how its views' tool calls are approved.
   * @param {string} serverId
   */
  choicesFor(serverId) {
    /** @type {PolicyEntry[]} */
    const policy = [];
    for (const [key, pref] of Object.entries(this.prefs)) {
      const [id, tool] = parseKey(key);
      if (id !== serverId || !pref || tool === null) continue;
      if (pref.enabled === false) policy.push({ source: `mcp:${id}`, tool, policy: "deny" });
      else if (pref.policy && POLICIES.includes(pref.policy) && (pref.policy !== "allow" || pref.fingerprint)) {
        policy.push({ source: `mcp:${id}`, tool, policy: pref.policy, fingerprint: pref.fingerprint });
      }
    }
    return { policy, trusted: this.trusted.has(serverId) };
  }

  // ------------------------------------------------------------------ connections

  async #addFromForm() {
    const status = byId("mcp-add-status");
    const urlField = byId("mcp-url", HTMLInputElement);
    const headersField = byId("mcp-headers", HTMLTextAreaElement);
    const url = urlField.value.trim();
    let headers;
    try {
      headers = parseHeaders(headersField.value);
    } catch (err) {
      status.textContent = messageOf(err);
      return;
    }
    status.textContent = "";
    const id = `url:${url}`;
    urlField.value = "";
    headersField.value = "";
    await this.connect({ id, url, headers });
  }

  /**
   * @param {{id: string, url: string, headers?: Record<string, string>, relay?: string | null}} server
   * @returns {Promise<Connection>}
   */
  connect({ id, url, headers = {}, relay = null }) {
    const connecting = this.#connect({ id, url, headers, relay });
    this.connecting.set(id, connecting);
    return connecting;
  }

  /**
   * @param {{id: string, url: string, headers: Record<string, string>, relay: string | null}} server
   * @returns {Promise<Connection>}
   */
  async #connect({ id, url, headers, relay }) {
    /** @type {Connection} */
    const conn = { headers: {}, ...this.servers.get(id), id, url, relay, status: "connecting", error: null, advice: null };
    conn.headers = Object.keys(headers).length ? headers : conn.headers;
    conn.headerNames = Object.keys(conn.headers);
    this.servers.set(id, conn);
    this.#save();
    this.render();
    try {
      await this.ready;
      await this.signingOut;
      conn.info = /** @type {ServerDescription} */ (await this.core.call("mcp.connect", { id, url, headers: conn.headers }));
      conn.status = "connected";
    } catch (err) {
      conn.status = "error";
      conn.needsSignIn = SIGN_IN_CODES.has(codeOf(err));
      conn.error = messageOf(err); // a sentence (pycore/contract.py): "<url> requires authorization (401)"
      conn.advice = conn.needsSignIn ? null : await this.#doctor(url, conn.headers);
    }
    this.render();
    return conn;
  }

  /**
   * OAuth for a protected server (web/app/oauth.js); called from the click, so the popup may open.
   * @param {Connection} conn
   */
  async #signIn(conn) {
    try {
      await signIn(this.core, { serverUrl: conn.url });
      await this.connect(conn);
    } catch (err) {
      conn.error = messageOf(err); // the worker's refusal, as a sentence
      this.render();
    }
  }

  /**
   * @param {string} url
   * @param {Record<string, string>} headers
   * @returns {Promise<Diagnosis | null>}
   */
  async #doctor(url, headers) {
    if (!this.core.methods?.includes("mcp.doctor")) return null;
    try {
      return /** @type {Diagnosis} */ (await this.core.call("mcp.doctor", { url, headers, origin: location.origin }));
    } catch {
      return null;
    }
  }

  /**
   * Whether the server is connected, once the saved servers' connections at load (or this one's now) have settled.
   * @param {string} id
   */
  async connected(id) {
    await this.restored;
    await this.connecting.get(id);
    return this.servers.get(id)?.status === "connected";
  }

  /** @param {string} id */
  async disconnect(id) {
    const conn = this.servers.get(id);
    if (!conn) return;
    try {
      await this.core.call("mcp.disconnect", { id });
    } catch (err) {
      this.notify(messageOf(err));
    }
    conn.status = "disconnected";
    conn.info = null;
    if (conn.relay) this.servers.delete(id);
    this.#save();
    this.render();
  }

  /** @param {string} id */
  #forget(id) {
    const conn = this.servers.get(id);
    this.servers.delete(id);
    this.#save();
    this.render();
    // Its sign-in goes with it: the worker drops the server's tokens from its vault (SECURITY.md T-A11), before
    // any later connect (the same URL added again must ask to sign in again).
    if (!conn?.url) return;
    this.signingOut = Promise.all([this.signingOut, this.ready]).then(
      () => this.core.call("mcp.oauth_forget", { server_url: conn.url })).catch((err) => this.notify(messageOf(err)));
  }

  #save() {
    const saved = [...this.servers.values()].filter((s) => !s.relay)
      .map((s) => ({ id: s.id, url: s.url, headerNames: s.headerNames ?? [] }));
    prefs.setJSON(PREFS.mcpServers, saved);
  }

  /** The saved servers not listed yet, as disconnected entries; returns them. */
  #readSaved() {
    /** @type {{id: string, url: string, headerNames?: string[], relay?: string | null}[]} */
    const servers = prefs.getJSON(PREFS.mcpServers, []);
    const added = [];
    for (const saved of servers) {
      if (this.servers.has(saved.id)) continue;
      const conn = { id: saved.id, url: saved.url, headers: {}, headerNames: saved.headerNames ?? [],
                     status: /** @type {const} */ ("disconnected"), relay: saved.relay ?? null };
      this.servers.set(saved.id, conn);
      added.push(conn);
    }
    return added;
  }

  /**
   * Sync changed the saved servers (another device added or removed one): the list follows. A new one connects as
   * a saved one does at start (unless it needs its headers typed here); one removed elsewhere is disconnected.
   */
  reloadSaved() {
    const saved = new Set(prefs.getJSON(PREFS.mcpServers, /** @type {{id: string}[]} */ ([])).map((s) => s.id));
    for (const conn of [...this.servers.values()]) {
      if (conn.relay || saved.has(conn.id)) continue;
      this.servers.delete(conn.id);
      if (conn.status === "connected") this.core.call("mcp.disconnect", { id: conn.id }).catch(() => {});
    }
    for (const conn of this.#readSaved()) if (!conn.headerNames.length) void this.connect(conn);
    this.render();
  }

  async #reconnectSaved() {
    for (const conn of this.servers.values()) {
      if (!conn.relay && !(conn.headerNames ?? []).length) this.connect(conn);
    }
  }

  /**
   * @param {Connection} conn
   * @param {McpResource} resource
   */
  async #attachResource(conn, resource) {
    try {
      const { contents, parts } = /** @type {import("../types/contract").ResourceContents} */ (
        await this.core.call("mcp.read_resource",
                             { id: conn.id, uri: resource.uri, name: resource.name ?? undefined, as_parts: true }));
      this.onAttach(resource, contents, parts ?? []);
      this.notify(t("tools.attached", { name: resource.name ?? resource.uri }));
    } catch (err) {
      this.notify(messageOf(err), { error: true });
    }
  }

  /**
   * Prompts of connected servers, for the composer's slash commands.
   * @returns {import("./composer.js").SlashPrompt[]}
   */
  prompts() {
    return [...this.servers.values()].filter((s) => s.status === "connected")
      .flatMap((s) => /** @type {McpPrompt[]} */ (s.info?.prompts ?? []).map((p) => ({ ...p, serverId: s.id })));
  }

  // ------------------------------------------------------------------ Python tools

  /** @param {import("./settings.js").Profile | null} profile */
  profileChanged(profile) {
    const source = profile?.python_tools ?? "";
    byId("python-source", HTMLTextAreaElement).value = source;
    byId("python-status").textContent = "";
    this.python = { id: profile?.id ?? null, tools: [] };
    this.pythonPending = Promise.resolve(false);
    if (!profile || !source.trim()) return;
    // What #registerPython saved, as parsed: checked before use.
    const kept = prefs.getJSON(PREFS.pythonToolDefs + profile.id,
                               /** @type {{source?: unknown, tools?: unknown} | null} */ (null));
    if (kept?.source === source && Array.isArray(kept.tools)) {
      this.python.tools = /** @type {PageTool[]} */ (kept.tools);
      this.interpreter.useTools(profile.id, source);
    } else {
      this.pythonPending = this.#registerPython(source, false); // kept by an older build: defined once now
    }
  }

  async #savePython() {
    const source = byId("python-source", HTMLTextAreaElement).value;
    if (!this.settings.active) {
      byId("python-status").textContent = t("chat.noProfile");
      return;
    }
    this.pythonPending = this.#registerPython(source, true);
    if (await this.pythonPending) await this.settings.update({ python_tools: source });
  }

  /**
   * @param {string} source
   * @param {boolean} loud
   */
  async #registerPython(source, loud) {
    const status = byId("python-status");
    const id = this.python.id;
    if (!id) return false;
    status.classList.remove("error");
    status.textContent = t("tools.pythonDefining");
    try {
      const tools = await this.interpreter.defineTools(id, source);
      if (this.python.id !== id) return false; // another profile meanwhile
      this.python.tools = tools;
      prefs.setJSON(PREFS.pythonToolDefs + id, { source, tools });
      status.textContent = tools.length
        ? t("tools.pythonSaved", { count: tools.length, names: tools.map((x) => x.name).join(", ") })
        : t("tools.pythonCleared");
      return true;
    } catch (err) {
      status.textContent = t("tools.pythonFailed", { message: messageOf(err) });
      if (loud) status.classList.add("error");
      return false;
    }
  }

  // ------------------------------------------------------------------ chat.run parameters

  async runParams() {
    await this.pythonPending; // a profile's tools still being defined
    await this.#refresh();
    const mcp = [...this.servers.values()].filter((s) => s.status === "connected").map((s) => s.id);
    const python = this.python.tools.map((tool) => ({ ...tool, source: `python:${this.python.id}` }));
    /** @type {import("../types/contract").ToolRef[]} */
    const disabled = [];
    /** @type {PolicyEntry[]} */
    const policy = [];
    for (const [key, pref] of Object.entries(this.prefs)) {
      const [serverId, tool] = parseKey(key);
      const source = `mcp:${serverId}`;
      if (serverId === null || tool === null || !pref || !mcp.includes(serverId)) continue;
      if (pref.enabled === false) disabled.push({ source, tool });
      // An allow holds for the definition it was given for: without its fingerprint, the tool asks.
      if (pref.policy && POLICIES.includes(pref.policy) && (pref.policy !== "allow" || pref.fingerprint)) {
        policy.push({ source, tool, policy: pref.policy, fingerprint: pref.fingerprint });
      }
    }
    const trusted = mcp.filter((id) => this.trusted.has(id));
    // Code mode: the same servers' tools, as the code of a python call may call them (turned-off ones left out).
    const code = codeCatalog(mcp.map((id) => ({ id, info: this.servers.get(id)?.info,
      off: (/** @type {string} */ tool) => this.prefs[prefKey(id, tool)]?.enabled === false })));
    return { tools: { mcp, page: python, disabled, trusted }, policy, code };
  }
}

/**
 * One tool of one server, as a key of the remembered choices.
 * @param {string} serverId
 * @param {string} toolName
 */
function prefKey(serverId, toolName) {
  return JSON.stringify([serverId, toolName]);
}

/**
 * @param {string} key
 * @returns {[string, string] | [null, null]}
 */
function parseKey(key) {
  try {
    const parsed = JSON.parse(key);
    return Array.isArray(parsed) && parsed.length === 2 ? [String(parsed[0]), String(parsed[1])] : [null, null];
  } catch {
    return [null, null];
  }
}

/**
 * The code a failed core call carries (web/client/orizuru.js: one of ERROR_CODES), or "".
 * @param {unknown} err
 */
function codeOf(err) {
  return typeof err === "object" && err !== null && "code" in err ? String(err.code) : "";
}

/** @param {string} text */
export function parseHeaders(text) {
  /** @type {Record<string, string>} */
  const headers = {};
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    const at = line.indexOf(":");
    if (at <= 0) throw new Error(t("tools.badHeader", { line: i + 1 }));
    headers[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  });
  return headers;
}

/**
 * What the doctor found, as a list (its findings; older cores' shapes are read too).
 * @param {Diagnosis | string} advice
 */
function adviceNodes(advice) {
  if (typeof advice === "string") return h("p", {}, advice);
  /** @type {{findings?: unknown, problems?: unknown, advice?: unknown}} */
  const said = advice;
  const items = said.findings ?? said.problems ?? said.advice ?? null;
  if (Array.isArray(items)) {
    return h("ul", {}, items.map((/** @type {string | Record<string, unknown>} */ item) => h("li", {},
      typeof item === "string" ? item
        : [item.message ?? item.problem ?? item.title ?? "", item.fix ? ` — ${item.fix}` : ""].join(""))));
  }
  if (typeof items === "string") return h("p", {}, items);
  return h("pre", {}, JSON.stringify(advice, null, 2));
}

/** @param {Diagnosis} advice */
function doctorNodes(advice) {
  const nodes = [adviceNodes(advice)];
  if (advice?.relay_hint) nodes.push(h("p", { className: "hint" }, String(advice.relay_hint)));
  return nodes;
}
