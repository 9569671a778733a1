/**
 * The artifact panel: beside the chat (the whole screen at phone width), one artifact at a time, with Preview and
 * Code tabs, its versions (‹ 2/3 ›), Copy, Download, Open in new tab, and the hosts the user lets it reach.
 *
 *   const panel = new ArtifactPanel({element, frameURL, mermaidMarkup, notify})
 *   panel.show(versions, index = last)   versions: Artifact[] (web/artifacts/artifact.js), oldest first
 *   panel.showing(id) -> boolean         the panel is open on the artifact with this id (a tool-made one)
 *   panel.close()
 *
 * Isolation, the same as an MCP App view's (web/mcp_app/): Preview loads the views' frame page
 * (web/mcp_app/frame.html) by URL into <iframe sandbox="allow-scripts">, an opaque origin with none of the page's
 * storage, cookies or DOM, which draws the artifact's document in a second sandboxed frame (another opaque
 * origin) under a policy of its own, put at the document's top (web/mcp_app/policy.js): inline scripts and
 * styles, data: and blob: images, no host at all unless the user allowed some here (then only those, as a view's
 * declared hosts, and the outer frame narrows its own policy to them too); no popups, no top navigation, no forms.
 * Open in new tab opens a blob: document that holds only that same frame page, and a script of ours (a blob
 * too) that hands it the artifact: the artifact never runs in the blob's document (which has this site's origin),
 * only two sandboxed frames down, as in the panel; the tab is opened with noopener. The panel reads nothing the frame
 * passes on from the artifact but its "ready" and the frame's notice that it stopped an artifact sending too much
 * (web/mcp_app/limits.js, as for a view: SECURITY.md T-W9), which the panel then says.
 */

import { h } from "../app/dom.js";
import { t } from "../app/i18n.js";
import { shownTheme } from "../app/theme.js";
import { highlightCode } from "../render/highlight.js";
import { sanitizeToFragment } from "../render/sanitize.js";
import { viewPolicy, withPolicy } from "../mcp_app/policy.js";
import { documentOf, fileOf } from "./artifact.js";

/** @typedef {import("./artifact.js").Artifact} Artifact */

const READY = "ui/notifications/sandbox-proxy-ready"; // web/mcp_app/frame.html's
const RESOURCE = "ui/notifications/sandbox-resource-ready";
const STOPPED = "orizuru/notifications/view-stopped"; // the frame stopped the artifact: {reason: "size" | "rate"}
const FEEDBACK_MS = 1500;
const TAB_URL_LIFE_MS = 60_000; // the new tab's blob: URLs are revoked once it has surely read them
/** @type {Record<string, string>} */
const HIGHLIGHT = { html: "html", svg: "xml", mermaid: "plaintext", markdown: "markdown", text: "plaintext" };

export class ArtifactPanel {
  /**
   * @param {{element: HTMLElement, frameURL: string, mermaidMarkup?: (source: string) => Promise<string>,
   *          notify?: (text: string, options?: {error?: boolean}) => void}} options
   */
  constructor({ element, frameURL, mermaidMarkup, notify = () => {} }) {
    this.el = element;
    this.frameURL = frameURL;
    this.mermaidMarkup = mermaidMarkup;
    this.notify = notify;
    /** @type {Artifact[]} */
    this.versions = [];
    this.index = 0;
    this.tab = /** @type {"preview" | "code"} */ ("preview");
    /** @type {string[]} the hosts the user let this artifact reach (this panel, until another artifact opens) */
    this.hosts = [];
    /** @type {(() => void) | null} stops listening to the frame shown */
    this.unlisten = null;
    this.titleEl = h("h2", { className: "artifact-title", id: "artifact-title" });
    this.versionEl = h("span", { className: "artifact-version" });
    this.previous = h("button", { type: "button", className: "icon", "aria-label": t("artifact.previous"),
                                  title: t("artifact.previous"), onclick: () => this.#go(-1) }, "‹");
    this.next = h("button", { type: "button", className: "icon", "aria-label": t("artifact.next"),
                              title: t("artifact.next"), onclick: () => this.#go(1) }, "›");
    this.tabs = {
      preview: h("button", { type: "button", role: "tab", id: "artifact-tab-preview", "aria-controls": "artifact-body",
                             onclick: () => this.#setTab("preview") }, t("artifact.preview")),
      code: h("button", { type: "button", role: "tab", id: "artifact-tab-code", "aria-controls": "artifact-body",
                          onclick: () => this.#setTab("code") }, t("artifact.code")),
    };
    this.copyButton = h("button", { type: "button", onclick: () => this.#copy() }, t("artifact.copy"));
    this.hostsInput = h("input", { type: "text", className: "artifact-hosts-input", spellcheck: "false",
                                   "aria-label": t("artifact.hosts"), placeholder: "https://cdn.example.com" });
    this.hostsEl = h("details", { className: "artifact-network" },
      h("summary", {}, t("artifact.network")),
      h("p", { className: "hint" }, t("artifact.networkHint")),
      h("form", { className: "artifact-hosts", onsubmit: (/** @type {SubmitEvent} */ e) => { e.preventDefault(); this.#allowHosts(); } },
        this.hostsInput, h("button", { type: "submit" }, t("artifact.allowHosts"))));
    this.notice = h("p", { className: "artifact-notice", role: "status", hidden: true });
    this.body = h("div", { className: "artifact-body", id: "artifact-body", role: "tabpanel" });
    this.el.replaceChildren(
      h("header", { className: "artifact-head" }, this.titleEl,
        h("div", { className: "artifact-versions" }, this.previous, this.versionEl, this.next),
        h("button", { type: "button", className: "icon artifact-close", "aria-label": t("artifact.close"),
                      title: t("artifact.close"), onclick: () => this.close() }, "×")),
      h("div", { className: "artifact-bar" },
        h("div", { role: "tablist", className: "artifact-tabs", "aria-label": t("artifact.view") }, this.tabs.preview, this.tabs.code),
        this.copyButton,
        h("button", { type: "button", onclick: () => this.#download() }, t("artifact.download")),
        h("button", { type: "button", onclick: () => this.#openTab() }, t("artifact.openTab"))),
      this.hostsEl, this.notice, this.body);
    this.el.hidden = true;
  }

  get current() {
    return this.versions[this.index];
  }

  /**
   * @param {Artifact[]} versions
   * @param {number} [index]
   */
  show(versions, index = versions.length - 1) {
    if (!versions.length) return;
    const same = this.current && versions[0].id && this.current.id === versions[0].id;
    if (!same) {
      this.hosts = [];
      this.hostsInput.value = "";
      this.tab = "preview";
    }
    this.versions = versions;
    this.index = Math.max(0, Math.min(index, versions.length - 1));
    this.el.hidden = false;
    document.body.classList.add("artifact-open");
    this.#draw();
  }

  /** @param {string} id */
  showing(id) {
    return !this.el.hidden && Boolean(id) && this.current?.id === id;
  }

  close() {
    this.unlisten?.();
    this.body.replaceChildren();
    this.el.hidden = true;
    document.body.classList.remove("artifact-open");
  }

  /** @param {number} delta */
  #go(delta) {
    this.index = Math.max(0, Math.min(this.index + delta, this.versions.length - 1));
    this.#draw();
  }

  /** @param {"preview" | "code"} tab */
  #setTab(tab) {
    this.tab = tab;
    this.#draw();
  }

  #draw() {
    const artifact = this.current;
    this.titleEl.textContent = artifact.title;
    const many = this.versions.length > 1;
    this.versionEl.textContent = t("artifact.version", { index: this.index + 1, count: this.versions.length });
    for (const el of [this.previous, this.next, this.versionEl]) el.hidden = !many;
    this.previous.disabled = this.index === 0;
    this.next.disabled = this.index === this.versions.length - 1;
    const code = artifact.type !== "image";
    this.tabs.code.hidden = !code;
    this.copyButton.hidden = !code;
    const tab = code ? this.tab : "preview";
    for (const [name, button] of Object.entries(this.tabs)) button.setAttribute("aria-selected", String(name === tab));
    this.body.setAttribute("aria-labelledby", this.tabs[tab].id);
    this.unlisten?.();
    this.#say("");
    this.body.replaceChildren(); // the frame shown goes at once, the next one comes when its document is ready
    if (tab === "code") this.#drawCode(artifact);
    else this.#drawPreview(artifact).catch((err) => this.#say(t("artifact.failed", { message: messageOf(err) })));
  }

  /** @param {Artifact} artifact */
  #drawCode(artifact) {
    const code = h("code", { className: `hljs language-${HIGHLIGHT[artifact.type] ?? "plaintext"}` });
    code.append(sanitizeToFragment(highlightCode(artifact.content, HIGHLIGHT[artifact.type]).html));
    this.body.replaceChildren(h("pre", { className: "artifact-code tool-code" }, code)); // tool-code: the highlighting colours
  }

  /** The artifact's document, with the policy it runs under at its top, and the hosts granted to it. */
  /** @param {Artifact} artifact */
  async #document(artifact) {
    // The user typed these: loopback and private hosts too are theirs to allow (a view of a remote server may not
    // name them, T-W11; here no server chose them).
    const { policy, refused, granted } = viewPolicy({ connectDomains: this.hosts, resourceDomains: this.hosts }, { local: true });
    if (refused.length) this.#say(t("artifact.hostsRefused", { list: refused.join(", ") }));
    const html = await documentOf(artifact, { mermaidSVG: this.mermaidMarkup, dark: shownTheme() === "dark" });
    return { html: withPolicy(html, policy), granted };
  }

  /** @param {Artifact} artifact */
  async #drawPreview(artifact) {
    const { html, granted } = await this.#document(artifact);
    if (artifact !== this.current || this.tab === "code" && artifact.type !== "image") return; // moved on meanwhile
    const frame = /** @type {HTMLIFrameElement} */ (h("iframe", { className: "artifact-frame", sandbox: "allow-scripts",
      referrerpolicy: "no-referrer", title: t("artifact.frame", { title: artifact.title }) }));
    let sent = false;
    /** @param {MessageEvent} event */
    const fromFrame = (event) => {
      if (event.source !== frame.contentWindow) return;
      const method = event.data?.method;
      if (method === READY && !sent) {
        sent = true;
        frame.contentWindow?.postMessage({ jsonrpc: "2.0", method: RESOURCE, params: { html, csp: granted } }, "*");
      } else if (method === STOPPED) {
        this.#say(t("artifact.stopped"));
      }
    };
    window.addEventListener("message", fromFrame);
    this.unlisten = () => {
      window.removeEventListener("message", fromFrame);
      this.unlisten = null;
    };
    this.body.replaceChildren(frame);
    frame.src = this.frameURL; // its first message (ready) finds the listener
  }

  async #copy() {
    let text = t("artifact.copied");
    try {
      await navigator.clipboard.writeText(this.current.content);
    } catch {
      text = t("chat.copyFailed");
    }
    this.copyButton.textContent = text;
    setTimeout(() => { this.copyButton.textContent = t("artifact.copy"); }, FEEDBACK_MS);
  }

  #download() {
    const { name, type, body } = fileOf(this.current);
    const url = URL.createObjectURL(new Blob([body], { type }));
    h("a", { href: url, download: name }).click();
    setTimeout(() => URL.revokeObjectURL(url), TAB_URL_LIFE_MS);
  }

  /** A new tab with the artifact, still two sandboxed frames down (see the top of this file). */
  async #openTab() {
    const artifact = this.current;
    try {
      const { html, granted } = await this.#document(artifact);
      const message = { jsonrpc: "2.0", method: RESOURCE, params: { html, csp: granted } };
      const script = `"use strict";(() => {const m = ${JSON.stringify(message).replace(/</g, "\\u003c")};` +
        "const f = document.querySelector(\"iframe\");" +
        "for (const e of [document.documentElement, document.body, f]) Object.assign(e.style, " +
        "{margin: \"0\", padding: \"0\", border: \"0\", width: \"100%\", height: \"100%\", display: \"block\", overflow: \"hidden\"});" +
        `addEventListener("message", (e) => { if (e.source === f.contentWindow && e.data?.method === ${JSON.stringify(READY)}) ` +
        "f.contentWindow.postMessage(m, \"*\"); });" +
        `f.src = ${JSON.stringify(this.frameURL)};})();`;
      const scriptURL = URL.createObjectURL(new Blob([script], { type: "text/javascript" }));
      const frameOrigin = new URL(this.frameURL).origin;
      const page = "<!doctype html><html><head><meta charset=\"utf-8\">" +
        `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src blob:; frame-src ${frameOrigin}; base-uri 'none'; form-action 'none'">` +
        `<title>${escapeText(artifact.title)}</title></head><body>` +
        `<iframe sandbox="allow-scripts" referrerpolicy="no-referrer" title="${escapeText(artifact.title).replace(/"/g, "&quot;")}"></iframe>` +
        `<script src="${scriptURL}"></script></body></html>`;
      const pageURL = URL.createObjectURL(new Blob([page], { type: "text/html" }));
      setTimeout(() => [scriptURL, pageURL].forEach((url) => URL.revokeObjectURL(url)), TAB_URL_LIFE_MS);
      window.open(pageURL, "_blank", "noopener"); // null either way with noopener: the tab itself is the answer
    } catch (err) {
      this.notify(t("artifact.failed", { message: messageOf(err) }), { error: true });
    }
  }

  #allowHosts() {
    this.hosts = this.hostsInput.value.split(/[\s,]+/).filter(Boolean);
    this.#draw();
  }

  /** @param {string} text */
  #say(text) {
    this.notice.textContent = text;
    this.notice.hidden = !text;
  }
}

/** @param {string} text */
const escapeText = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;");

/** @param {unknown} err */
const messageOf = (err) => String(/** @type {{message?: unknown}} */ (Object(err)).message ?? err);
