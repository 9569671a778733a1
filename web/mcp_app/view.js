/**
 * An MCP App view (the `io.modelcontextprotocol/ui` extension, SEP-1865) on its tool's card: the tool's `ui://`
 * resource, read through the client, drawn in two nested sandboxed frames, talking to the page only through
 * the extension's JSON-RPC over postMessage, with the official host side (@modelcontextprotocol/ext-apps'
 * AppBridge, loaded on the first view).
 *
 * The outer frame is web/mcp_app/frame.html (the extension's "sandbox proxy"), loaded by URL with
 * sandbox="allow-scripts": an opaque origin, so none of the page's storage, cookies or DOM, and a policy of its
 * own (a srcdoc or blob frame would inherit the page's, which runs no inline script). It draws the view in a
 * second sandboxed frame (another opaque origin) whose document starts with the policy built from what the
 * resource declared (web/mcp_app/policy.js): nothing beyond it, no host it did not name.
 *
 *   const view = new AppView({core, frameURL, serverId, uri, tool, args, result, theme, askToRun, onMessage})
 *        askToRun(ev, view) -> Promise<"allow" | "always" | "deny">   an `approval` event of mcp.app_call_tool
 *             (the user's choices and the server's trust, as for the model's calls: pycore.methods.mcp_apps);
 *             by default view.ask(ev), the question on the view
 *        policyFor() -> {policy, trusted}                     the user's choices for this server
 *        onMessage(text)                                     the view suggests a message (ui/message)
 *        local                                               its server runs on this machine (a relay's stdio
 *             server, a loopback URL): only then may the view name loopback or private-network hosts
 *   view.el; await view.start(); view.close()
 *   view.stats   {messages, dropped, stopped}   what the guard counted
 *
 * What the view may ask: call its server's tools whose visibility includes "app" (through approval),
 * read its server's resources, report its size (kept within bounds), log, open an http(s) link once the user
 * agrees, and suggest a message, which goes into the composer, not to the model. One question at a time: while
 * the user is asked, the view's other calls and links are refused, so it cannot bury a question under
 * another; and while the user is asked, the view's size changes are held (the last one is applied after), so
 * the question below it does not move under the pointer. A view that sends more than FLOOD_LIMIT messages in a
 * second, a message over MESSAGE_LIMIT, or more than SECOND_LIMIT in a second is stopped: its frames are removed
 * and the card says why. The outer frame holds the same size limits before anything reaches the page (it tells
 * the page with STOPPED), so a view's huge messages cost the page nothing (SECURITY.md T-W9, T-W10).
 */

import { h } from "../app/dom.js";
import { t } from "../app/i18n.js";
import { approvalQuestion } from "../app/approval.js";
import { MESSAGE_LIMIT, messageSize, SECOND_LIMIT } from "./limits.js";
import { viewPolicy, withPolicy } from "./policy.js";

export const APP_MIME = "text/html;profile=mcp-app";
export const FLOOD_LIMIT = 200; // messages in one second
const STOPPED = "orizuru/notifications/view-stopped"; // from the outer frame: {reason: "size" | "rate"}
const MB = 2 ** 20;
const MIN_HEIGHT = 48;
const MAX_HEIGHT = 800;
const HOST_INFO = { name: "Orizuru", version: "1" };

/**
 * @typedef {import("@modelcontextprotocol/ext-apps/app-bridge").AppBridge} AppBridge
 * @typedef {import("../types/contract").ApprovalEvent} ApprovalEvent
 * @typedef {"allow" | "always" | "deny"} Decision
 * @typedef {import("../types/contract").Params<"mcp.app_call_tool">} AppCallParams
 * @typedef {{policy: AppCallParams["policy"], trusted: AppCallParams["trusted"]}} ServerChoices
 * @typedef {{core: Pick<import("../client/orizuru.js").Agent, "call">, frameURL: string, serverId: string,
 *   uri: string, tool: string, args?: Record<string, unknown>, result?: CallToolResult, theme?: "light" | "dark",
 *   askToRun?: (ev: ApprovalEvent, view: AppView) => Promise<Decision>, policyFor?: () => ServerChoices,
 *   onMessage?: (text: string) => void, local?: boolean}} AppViewOptions
 * @typedef {"size" | "rate" | "flood"} StopReason
 * @typedef {Awaited<ReturnType<NonNullable<AppBridge["oncalltool"]>>>} CallToolResult   MCP's, as the server sent it
 * @typedef {Awaited<ReturnType<NonNullable<AppBridge["onreadresource"]>>>} ReadResourceResult   MCP's, as sent
 */

/** @type {Promise<typeof import("@modelcontextprotocol/ext-apps/app-bridge")> | null} */
let bridgeModule = null;
const loadBridge = () => (bridgeModule ??= import("@modelcontextprotocol/ext-apps/app-bridge"));

export class AppViewError extends Error {}

export class AppView {
  /** @param {AppViewOptions} options */
  constructor({ core, frameURL, serverId, uri, tool, args = {}, result = { content: [] }, theme = "light",
                askToRun = (ev, view) => view.ask(ev), policyFor = () => ({ policy: [], trusted: false }), onMessage = () => {},
                local = false }) {
    this.core = core;
    this.frameURL = frameURL;
    this.serverId = serverId;
    this.uri = uri;
    this.tool = tool;
    this.args = args;
    this.result = result;
    this.theme = theme;
    this.askToRun = askToRun;
    this.policyFor = policyFor;
    this.onMessage = onMessage;
    this.local = local;
    /** @type {{messages: number, dropped: number, stopped: StopReason | null}} */
    this.stats = { messages: 0, dropped: 0, stopped: null };
    /** @type {AppBridge | undefined} */
    this.bridge = undefined;
    /** @type {string | undefined} the policy the view's document runs under */
    this.policy = undefined;
    /** @type {((event: MessageEvent) => void) | undefined} */
    this.guard = undefined;
    /** @type {{start: number, count: number, size: number} | undefined} this second's messages */
    this.window = undefined;
    /** @type {number | undefined} the height the view asked for last */
    this.height = undefined;
    this.asking = false;
    /** @type {(() => void) | null} answers the open question no */
    this.unanswered = null;
    this.frame = /** @type {HTMLIFrameElement} */ (h("iframe", { className: "mcp-app-frame", title: t("app.title", { name: tool }),
                               sandbox: "allow-scripts", referrerpolicy: "no-referrer" }));
    this.frame.style.height = `${MIN_HEIGHT * 3}px`;
    this.notice = h("p", { className: "mcp-app-notice", role: "status", hidden: true });
    this.askEl = h("section", { className: "tool-approval mcp-app-ask", hidden: true });
    this.el = h("section", { className: "mcp-app", "aria-label": t("app.title", { name: tool }) },
      this.notice, this.frame, this.askEl); // the question below the view: the view does not move under the pointer
    this.closed = false;
  }

  async start() {
    const contents = (await this.core.call("mcp.read_resource", { id: this.serverId, uri: this.uri })).contents ?? [];
    const item = contents.find((c) => c.uri === this.uri) ?? contents[0];
    if (!item || String(item.mimeType ?? "").replace(/\s/g, "").toLowerCase() !== APP_MIME) {
      throw new AppViewError(t("app.notAView", { uri: this.uri, type: String(item?.mimeType ?? "nothing") }));
    }
    const html = typeof item.text === "string" ? item.text : decodeBase64(String(item.blob ?? ""));
    const { policy, refused, unreachable, granted } = viewPolicy(cspOf(item), { local: this.local });
    this.#say([refused.length ? t("app.refused", { list: refused.join(", ") }) : "",
               unreachable.length ? t("app.private", { list: unreachable.join(", ") }) : ""].filter(Boolean).join(" "));
    this.policy = policy;
    const { AppBridge, PostMessageTransport } = await loadBridge();
    if (this.closed) return;
    const bridge = new AppBridge(null, HOST_INFO, {
      openLinks: {}, serverTools: {}, serverResources: {}, logging: {},
      sandbox: { csp: granted },
    }, { hostContext: { theme: this.theme, displayMode: "inline", availableDisplayModes: ["inline"],
                        containerDimensions: { maxHeight: MAX_HEIGHT }, locale: document.documentElement.lang || "en",
                        platform: "web" } });
    this.bridge = bridge;
    bridge.oncalltool = (params) => this.#callTool(params);
    // The server's answer as it sent it: the core passes MCP's result through.
    bridge.onreadresource = async ({ uri }) => /** @type {ReadResourceResult} */ (
      await this.core.call("mcp.read_resource", { id: this.serverId, uri }));
    bridge.onopenlink = async ({ url }) => ((await this.#openLink(url)) ? {} : { isError: true });
    bridge.onmessage = async ({ content }) => {
      const text = (content ?? []).flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n");
      if (text) this.onMessage(text);
      return {};
    };
    bridge.onsizechange = ({ height }) => {
      if (height === undefined || !Number.isFinite(height)) return;
      this.height = Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(height)));
      if (!this.asking) this.frame.style.height = `${this.height}px`; // held while a question is open
    };
    // What the view logs is for whoever debugs it: the browser's console, as the extension's examples expect.
    bridge.onloggingmessage = ({ level, data }) => console.info(`MCP App view ${this.tool} (${level}):`, data);
    bridge.onrequestdisplaymode = async () => ({ mode: "inline" });
    bridge.onupdatemodelcontext = async () => ({});
    bridge.addEventListener("sandboxready", () => {
      bridge.sendSandboxResourceReady({ html: withPolicy(html, policy), sandbox: "allow-scripts", csp: granted });
    });
    bridge.oninitialized = () => {
      bridge.sendToolInput({ arguments: this.args ?? {} });
      bridge.sendToolResult(this.result);
    };
    // The guard sees the frame's messages before the bridge does, and holds back a flood.
    this.guard = (event) => this.#guard(event);
    window.addEventListener("message", this.guard);
    if (!this.frame.contentWindow) throw new AppViewError("the view's element must be in the page before it starts");
    await bridge.connect(new PostMessageTransport(this.frame.contentWindow, this.frame.contentWindow));
    this.frame.src = this.frameURL; // its first message (sandbox-proxy-ready) finds the bridge listening
  }

  /** @param {MessageEvent} event */
  #guard(event) {
    if (event.source !== this.frame.contentWindow || !this.frame.contentWindow) return;
    const now = performance.now();
    if (!this.window || now - this.window.start > 1000) this.window = { start: now, count: 0, size: 0 };
    this.window.count += 1;
    this.stats.messages += 1;
    const msg = event.data;
    const told = msg?.method === STOPPED ? msg.params?.reason : null;
    const size = told ? 0 : messageSize(msg, MESSAGE_LIMIT);
    this.window.size += size;
    const reason = told === "size" || size > MESSAGE_LIMIT ? "size"
      : told === "rate" || this.window.size > SECOND_LIMIT ? "rate"
        : this.window.count > FLOOD_LIMIT ? "flood" : null;
    if (!reason) return;
    event.stopImmediatePropagation();
    this.stats.dropped += 1;
    if (this.stats.stopped) return;
    this.stats.stopped = reason;
    this.close();
    this.#say(reason === "size" ? t("app.tooLarge", { size: `${MESSAGE_LIMIT / MB} MB` })
      : reason === "rate" ? t("app.tooMuch", { size: `${SECOND_LIMIT / MB} MB` })
        : t("app.flooded", { count: FLOOD_LIMIT }));
  }

  /**
   * @param {{name: string, arguments?: Record<string, unknown>}} params
   * @returns {Promise<CallToolResult>}
   */
  async #callTool({ name, arguments: args = {} }) {
    const { policy, trusted } = this.policyFor();
    try {
      const { result } = await this.core.call("mcp.app_call_tool",
        { id: this.serverId, name, arguments: args, policy, trusted },
        (ev) => {
          if (ev.type !== "approval") return;
          this.askToRun(ev, this).then((decision) =>
            this.core.call("chat.approve", { call_id: ev.call_id, decision }));
        });
      return /** @type {CallToolResult} */ (result); // the server's, as it sent it (pycore.methods.mcp_apps)
    } catch (err) {
      return { content: [{ type: "text", text: /** @type {Error} */ (err).message }], isError: true };
    }
  }

  /**
   * Ask the user, on the view, whether the tool call it wants may run: "allow" | "always" | "deny".
   * @param {ApprovalEvent} ev
   * @returns {Promise<Decision>}
   */
  ask(ev) {
    if (this.asking) return Promise.resolve(/** @type {Decision} */ ("deny")); // one question at a time: a view cannot bury the first
    this.asking = true;
    return new Promise((resolve) => {
      /** @param {Decision} decision */
      const done = (decision) => {
        this.#doneAsking();
        resolve(decision);
      };
      this.unanswered = () => done("deny"); // the view goes before the user answers
      this.askEl.replaceChildren(...approvalQuestion(ev, {
        title: t("app.asksToRun", { name: ev.original_name ?? ev.name }), decide: done, who: false }));
      this.askEl.hidden = false;
    });
  }

  /**
   * An http(s) link the view wants opened: shown with its host, opened only if the user says so.
   * @param {string} url
   * @returns {Promise<boolean>}
   */
  #openLink(url) {
    let parsed;
    try {
      parsed = new URL(url);
    } catch {
      return Promise.resolve(false);
    }
    if (!["https:", "http:"].includes(parsed.protocol) || this.asking) return Promise.resolve(false);
    this.asking = true;
    return new Promise((resolve) => {
      /** @param {boolean} open */
      const done = (open) => {
        this.#doneAsking();
        if (open) window.open(parsed.href, "_blank", "noopener,noreferrer");
        resolve(open);
      };
      this.unanswered = () => done(false);
      this.askEl.replaceChildren(
        h("h4", {}, t("app.asksToOpen", { host: parsed.host })),
        h("p", {}, h("code", { className: "mcp-app-link" }, parsed.href)),
        h("div", { className: "approval-actions" },
          h("button", { type: "button", className: "primary", onclick: () => done(true) }, t("app.open")),
          h("button", { type: "button", onclick: () => done(false) }, t("app.cancel"))));
      this.askEl.hidden = false;
    });
  }

  #doneAsking() {
    this.asking = false;
    this.unanswered = null;
    this.askEl.hidden = true;
    this.askEl.replaceChildren();
    if (this.height) this.frame.style.height = `${this.height}px`; // the size the view asked for last
  }

  /**
   * The view cannot be shown: why, instead of its frame.
   * @param {string} text
   */
  fail(text) {
    this.close();
    this.#say(text);
  }

  /** @param {string} text */
  #say(text) {
    this.notice.textContent = text;
    this.notice.hidden = !text;
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    this.unanswered?.(); // a question still open is answered no: its call must not wait in the core forever
    if (this.guard) window.removeEventListener("message", this.guard);
    this.bridge?.teardownResource({}).catch(() => {});
    this.bridge?.close?.().catch?.(() => {});
    this.frame.remove();
  }
}

/**
 * The policy a view's resource declares (`_meta.ui.csp`), as sent.
 * @param {Record<string, unknown>} item
 * @returns {Record<string, unknown> | null}
 */
function cspOf(item) {
  /** @type {{ui?: {csp?: unknown}} | undefined} */
  const meta = /** @type {{ui?: {csp?: unknown}} | undefined} */ (item._meta);
  const csp = meta?.ui?.csp;
  return csp && typeof csp === "object" ? /** @type {Record<string, unknown>} */ (csp) : null;
}

/** @param {string} text */
function decodeBase64(text) {
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}
