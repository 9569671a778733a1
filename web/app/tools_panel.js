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
 *                                     tools.page, with source `python:<profile id>`
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
 * under it, newest first, as text.
 */

import { h } from "./dom.js";
import { onLanguageChange, t } from "./i18n.js";
import { signIn } from "./oauth.js";
import { listRelayServers, relayServerUrl } from "./relay.js";
import { isLocalURL } from "../mcp_app/policy.js";
import { PREFS, prefs } from "../store/prefs.js";

// The error codes (pycore/contract.py) after which "Sign in" is the way on: OAuth, or sign in for more scope.
const SIGN_IN_CODES = new Set(["mcp_auth_required", "mcp_insufficient_scope"]);
const FOLLOW_MS = 1000; // how often the open panel asks the worker for the servers' tool lists (no network)
const POLICIES = ["ask", "allow", "deny"];
const SAMPLING_LIMITS = { // prefs key -> chat.run's limits field, and its value unless the user changed it
  samplingMaxTokens: { name: "sampling_max_tokens", fallback: 1024 },
  samplingMaxInputChars: { name: "sampling_max_input_chars", fallback: 100_000 },
};

/** Which MCP revision a connected server speaks: 2026-07-28 stands alone per request; older ones keep a session. */
function protocolBadge(info) {
  const version = info?.protocol_version;
  if (!version) return "";
  const hint = version >= "2026-07-28" ? "tools.protocolModern" : "tools.protocolOlder";
  return h("span", { className: "protocol-badge", title: t(hint, { version }) }, t("tools.protocol", { version }));
}

export class ToolsPanel {
  constructor({ core, ready, coreReadyNow, settings, relayToken, notify, interpreter, inspector = null,
                onAttach = () => {} }) {
    onLanguageChange(() => this.render());
    Object.assign(this, { core, ready, coreReadyNow, settings, relayToken, notify, interpreter, inspector });
    this.servers = new Map(); // id -> {id, url, headers, status, info, error, advice, relay}
    this.relayServers = [];
    this.relayError = null;
    this.prefs = prefs.getJSON(PREFS.toolChoices, {});
    this.trusted = new Set(prefs.getJSON(PREFS.trustedServers, []).filter((id) => typeof id === "string"));
    prefs.remove(PREFS.oldToolChoices); // keyed by bare tool names, from before choices were per server
    this.python = { id: null, tools: [] };
    this.pythonPending = Promise.resolve(false);
    this.openLogs = new Set(); // the servers whose log the user opened
    this.onAttach = onAttach; // (resource, contents, parts): the user attached a resource it read
    this.onPrompt = null;
    this.dialog = document.getElementById("tools-dialog");
    this.list = document.getElementById("mcp-servers");
    this.relayList = document.getElementById("relay-servers");
    document.getElementById("tools-close").addEventListener("click", () => this.dialog.close());
    // While the panel is open it follows the servers' tool lists: a tool a server adds (list_changed) shows
    // up, marked new, without closing and opening again. Drawn again only when a list changed, so a choice
    // being made in a select is not disturbed.
    this.dialog.addEventListener("close", () => clearInterval(this.following));
    document.getElementById("mcp-add").addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.#addFromForm();
    });
    document.getElementById("python-save").addEventListener("click", () => this.#savePython());
    document.getElementById("roots-save").addEventListener("click", () => this.#saveRoots());
    for (const saved of prefs.getJSON(PREFS.mcpServers, [])) {
      this.servers.set(saved.id, { id: saved.id, url: saved.url, headers: {}, headerNames: saved.headerNames ?? [],
                                   status: "disconnected", relay: saved.relay ?? null });
    }
    for (const [id, key] of [["sampling-budget", "samplingMaxTokens"], ["sampling-input", "samplingMaxInputChars"]]) {
      const field = document.getElementById(id);
      field.value = String(this.samplingLimits()[SAMPLING_LIMITS[key].name]);
      field.addEventListener("change", () => {
        if (field.validity.valid && field.value) prefs.set(PREFS[key], String(Math.round(field.value)));
      });
    }
    this.roots = prefs.getJSON(PREFS.mcpRoots, []);
    document.getElementById("roots-list").value = this.roots.map((r) => [r.uri, r.name].filter(Boolean).join(" ")).join("\n");
    // The roots go to the core before any server connects, so its first roots/list gets them.
    this.ready.then(async () => {
      if (this.roots.length) await this.core.call("mcp.set_roots", { roots: this.roots }).catch(() => {});
      this.#reconnectSaved();
    }, () => {});
  }

  /** What a server's sampling request may use (Tools): the most tokens the model may write (1024 unless changed)
   *  and the most characters of text it may send the model (100,000): chat.run's limits.sampling_max_*. */
  samplingLimits() {
    return Object.fromEntries(Object.entries(SAMPLING_LIMITS).map(([key, { name, fallback }]) => {
      const saved = Number(prefs.get(PREFS[key]));
      return [name, Number.isInteger(saved) && saved > 0 ? saved : fallback];
    }));
  }

  // ------------------------------------------------------------------ roots

  /** "Save roots": one file:// URI per line, a name after a space; the core tells the connected servers. */
  async #saveRoots() {
    const status = document.getElementById("roots-status");
    status.classList.remove("error");
    const roots = [];
    const lines = document.getElementById("roots-list").value.split("\n");
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
      status.textContent = err.message;
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
    const relaySection = document.getElementById("relay-section");
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
    const live = (s) => s?.status === "connected" || s?.status === "unreachable";
    if (!this.coreReadyNow?.() || ![...this.servers.values()].some(live)) return;
    try {
      const { servers } = await this.core.call("mcp.list", {});
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

  #setTrusted(id, on) {
    if (on) this.trusted.add(id);
    else this.trusted.delete(id);
    prefs.setJSON(PREFS.trustedServers, [...this.trusted]);
  }

  async #loadRelay() {
    try {
      this.relayServers = await listRelayServers(this.relayToken);
      this.relayError = null;
    } catch (err) {
      this.relayError = err.message;
    }
    this.render();
  }

  #relayItem(server) {
    const id = `relay:${server.name}`;
    const conn = this.servers.get(id);
    const item = conn ? this.#serverItem(conn, server.name) : h("li", { className: "server", dataset: { id } },
      h("div", { className: "server-head" },
        h("strong", {}, server.name),
        h("code", { className: "command" }, [server.command, ...(server.args ?? [])].join(" ")),
        h("button", { type: "button", className: "primary", "aria-label": `${t("tools.connect")} ${server.name}`,
                      onclick: () => this.connect({ id, url: relayServerUrl(server), relay: server.name,
                                                    headers: { Authorization: `Bearer ${this.relayToken}` } }) },
          t("tools.connect"))));
    return item;
  }

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
    if (conn.status === "connected" && conn.info) item.append(this.#capabilities(conn));
    if (conn.status === "connected" && conn.info?.log?.length) item.append(this.#log(conn));
    return item;
  }

  /** The server's log messages (notifications/message), newest first, as text; open stays open while it grows. */
  #log(conn) {
    const entries = [...conn.info.log].reverse();
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

  #capabilities(conn) {
    const { tools = [], resources = [], prompts = [] } = conn.info;
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

  #setPref(key, change) {
    this.prefs[key] = { ...(this.prefs[key] ?? {}), ...change };
    prefs.setJSON(PREFS.toolChoices, this.prefs);
  }

  /** "Always allow this tool" on a card: that server's tool, as it is defined now (the approval event). */
  alwaysAllow({ source, original_name: name, fingerprint } = {}) {
    if (!source?.startsWith("mcp:") || !name || !fingerprint) return; // Python and page tools: this run only
    this.#setPref(prefKey(source.slice("mcp:".length), name), { policy: "allow", fingerprint });
    if (this.dialog.open) this.render();
  }

  /** The `ui://` view of a connected server's tool (MCP Apps), or null. */
  viewOf(serverId, toolName) {
    const tool = this.servers.get(serverId)?.info?.tools?.find((t) => t.original_name === toolName);
    return tool?.ui ?? null;
  }

  /** Whether a connected server runs on this machine: a stdio server of the relay, or a URL on a loopback host
   *  (an --allow-remote server of the relay is elsewhere, though the relay is here). Unknown: not local. */
  isLocal(serverId) {
    const conn = this.servers.get(serverId);
    if (!conn) return false;
    if (conn.relay) return this.relayServers.find((s) => s.name === conn.relay)?.kind === "stdio";
    return isLocalURL(conn.url);
  }

  /** The user's choices for one server's tools and its trust: how its views' tool calls are approved. */
  choicesFor(serverId) {
    const policy = [];
    for (const [key, pref] of Object.entries(this.prefs)) {
      const [id, tool] = parseKey(key);
      if (id !== serverId) continue;
      if (pref.enabled === false) policy.push({ source: `mcp:${id}`, tool, policy: "deny" });
      else if (POLICIES.includes(pref.policy) && (pref.policy !== "allow" || pref.fingerprint)) {
        policy.push({ source: `mcp:${id}`, tool, policy: pref.policy, fingerprint: pref.fingerprint });
      }
    }
    return { policy, trusted: this.trusted.has(serverId) };
  }

  // ------------------------------------------------------------------ connections

  async #addFromForm() {
    const status = document.getElementById("mcp-add-status");
    const url = document.getElementById("mcp-url").value.trim();
    let headers;
    try {
      headers = parseHeaders(document.getElementById("mcp-headers").value);
    } catch (err) {
      status.textContent = err.message;
      return;
    }
    status.textContent = "";
    const id = `url:${url}`;
    document.getElementById("mcp-url").value = "";
    document.getElementById("mcp-headers").value = "";
    await this.connect({ id, url, headers });
  }

  async connect({ id, url, headers = {}, relay = null }) {
    const conn = { ...(this.servers.get(id) ?? {}), id, url, relay, status: "connecting", error: null, advice: null };
    conn.headers = Object.keys(headers).length ? headers : conn.headers ?? {};
    conn.headerNames = Object.keys(conn.headers);
    this.servers.set(id, conn);
    this.#save();
    this.render();
    try {
      await this.ready;
      await this.signingOut;
      conn.info = await this.core.call("mcp.connect", { id, url, headers: conn.headers });
      conn.status = "connected";
    } catch (err) {
      conn.status = "error";
      conn.needsSignIn = SIGN_IN_CODES.has(err.code);
      conn.error = err.message; // a sentence (pycore/contract.py): "<url> requires authorization (401)"
      conn.advice = conn.needsSignIn ? null : await this.#doctor(url, conn.headers);
    }
    this.render();
    return conn;
  }

  /** OAuth for a protected server (web/app/oauth.js); called from the click, so the popup may open. */
  async #signIn(conn) {
    try {
      await signIn(this.core, { serverUrl: conn.url });
      await this.connect(conn);
    } catch (err) {
      conn.error = err.message; // the worker's refusal, as a sentence
      this.render();
    }
  }

  async #doctor(url, headers) {
    if (!this.core.methods?.includes("mcp.doctor")) return null;
    try {
      return await this.core.call("mcp.doctor", { url, headers, origin: location.origin });
    } catch {
      return null;
    }
  }

  async disconnect(id) {
    const conn = this.servers.get(id);
    if (!conn) return;
    try {
      await this.core.call("mcp.disconnect", { id });
    } catch (err) {
      this.notify(err.message);
    }
    conn.status = "disconnected";
    conn.info = null;
    if (conn.relay) this.servers.delete(id);
    this.#save();
    this.render();
  }

  #forget(id) {
    const conn = this.servers.get(id);
    this.servers.delete(id);
    this.#save();
    this.render();
    // Its sign-in goes with it: the worker drops the server's tokens from its vault (SECURITY.md T-A11), before
    // any later connect (the same URL added again must ask to sign in again).
    if (!conn?.url) return;
    this.signingOut = Promise.all([this.signingOut, this.ready]).then(
      () => this.core.call("mcp.oauth_forget", { server_url: conn.url })).catch((err) => this.notify(err.message));
  }

  #save() {
    const saved = [...this.servers.values()].filter((s) => !s.relay)
      .map((s) => ({ id: s.id, url: s.url, headerNames: s.headerNames ?? [] }));
    prefs.setJSON(PREFS.mcpServers, saved);
  }

  async #reconnectSaved() {
    for (const conn of this.servers.values()) {
      if (!conn.relay && !(conn.headerNames ?? []).length) this.connect(conn);
    }
  }

  async #attachResource(conn, resource) {
    try {
      const { contents, parts } = await this.core.call("mcp.read_resource",
        { id: conn.id, uri: resource.uri, name: resource.name ?? undefined, as_parts: true });
      this.onAttach(resource, contents, parts ?? []);
      this.notify(t("tools.attached", { name: resource.name ?? resource.uri }));
    } catch (err) {
      this.notify(err.message, { error: true });
    }
  }

  /** Prompts of connected servers, for the composer's slash commands. */
  prompts() {
    return [...this.servers.values()].filter((s) => s.status === "connected")
      .flatMap((s) => (s.info?.prompts ?? []).map((p) => ({ ...p, serverId: s.id })));
  }

  // ------------------------------------------------------------------ Python tools

  profileChanged(profile) {
    const source = profile?.python_tools ?? "";
    document.getElementById("python-source").value = source;
    document.getElementById("python-status").textContent = "";
    this.python = { id: profile?.id ?? null, tools: [] };
    this.pythonPending = Promise.resolve(false);
    if (!profile || !source.trim()) return;
    const kept = prefs.getJSON(PREFS.pythonToolDefs + profile.id, null);
    if (kept?.source === source && Array.isArray(kept.tools)) {
      this.python.tools = kept.tools;
      this.interpreter.useTools(profile.id, source);
    } else {
      this.pythonPending = this.#registerPython(source, false); // kept by an older build: defined once now
    }
  }

  async #savePython() {
    const source = document.getElementById("python-source").value;
    if (!this.settings.active) {
      document.getElementById("python-status").textContent = t("chat.noProfile");
      return;
    }
    this.pythonPending = this.#registerPython(source, true);
    if (await this.pythonPending) await this.settings.update({ python_tools: source });
  }

  async #registerPython(source, loud) {
    const status = document.getElementById("python-status");
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
      status.textContent = t("tools.pythonFailed", { message: err.message });
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
    const disabled = [];
    const policy = [];
    for (const [key, pref] of Object.entries(this.prefs)) {
      const [serverId, tool] = parseKey(key);
      const source = `mcp:${serverId}`;
      if (!mcp.includes(serverId)) continue;
      if (pref.enabled === false) disabled.push({ source, tool });
      // An allow holds for the definition it was given for: without its fingerprint, the tool asks.
      if (POLICIES.includes(pref.policy) && (pref.policy !== "allow" || pref.fingerprint)) {
        policy.push({ source, tool, policy: pref.policy, fingerprint: pref.fingerprint });
      }
    }
    const trusted = mcp.filter((id) => this.trusted.has(id));
    return { tools: { mcp, page: python, disabled, trusted }, policy };
  }
}

/** One tool of one server, as a key of the remembered choices. */
function prefKey(serverId, toolName) {
  return JSON.stringify([serverId, toolName]);
}

function parseKey(key) {
  try {
    const parsed = JSON.parse(key);
    return Array.isArray(parsed) && parsed.length === 2 ? parsed : [null, null];
  } catch {
    return [null, null];
  }
}

export function parseHeaders(text) {
  const headers = {};
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    const at = line.indexOf(":");
    if (at <= 0) throw new Error(t("tools.badHeader", { line: i + 1 }));
    headers[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  });
  return headers;
}

function adviceNodes(advice) {
  if (typeof advice === "string") return h("p", {}, advice);
  const items = advice.findings ?? advice.problems ?? advice.advice ?? null;
  if (Array.isArray(items)) {
    return h("ul", {}, items.map((item) => h("li", {}, typeof item === "string" ? item
      : [item.message ?? item.problem ?? item.title ?? "", item.fix ? ` — ${item.fix}` : ""].join(""))));
  }
  if (typeof items === "string") return h("p", {}, items);
  return h("pre", {}, JSON.stringify(advice, null, 2));
}

function doctorNodes(advice) {
  const nodes = [adviceNodes(advice)];
  if (advice?.relay_hint) nodes.push(h("p", { className: "hint" }, String(advice.relay_hint)));
  return nodes;
}
