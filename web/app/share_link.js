/**
 * A conversation as a read-only link (#34), both ends.
 *
 *   const links = new ShareLink({store, chat, sync, notify})
 *   links.create()            Export → "This conversation as a read-only link": the branch on screen, sealed with a
 *                             fresh key (sync/shared.js), written as one file to the sync folder; a dialog gives the
 *                             link, and takes the file's public address where the storage gives it another one
 *   links.show(hash)          the viewer (`#/shared/<address>&k=<key>`): fetches the file (no cookies, no
 *                             referrer), opens it with the key from the fragment and shows the transcript, read-only,
 *                             through the page's own renderer (sanitized, remote images held: as any reply)
 *
 * The file must be readable without the user's password by whoever gets the link: on a WebDAV server, a public
 * share of the file or folder; in a Dropbox-like folder, the file's share address, pasted into the dialog.
 */

import { h } from "./dom.js";
import { t } from "./i18n.js";
import { markdownLabels } from "./step_view.js";
import { ImagePolicy, renderMarkdown } from "../render/markdown.js";
import { branchPath } from "../store/tree.js";
import { linkOf, openShared, parseLink, sealShared, SharedLinkError } from "../sync/shared.js";

const MAX_BYTES = 32 * 1024 * 1024;

/** @param {{parts?: {type: string, text?: string | null}[]}} message */
const textOf = (message) => (message.parts ?? []).filter((p) => p.type === "text").map((p) => p.text ?? "").join("\n\n");

export class ShareLink {
  /**
   * @param {{store: import("../store/transcripts.js").Store, chat: import("./chat.js").Chat,
   *   sync: import("./sync_settings.js").SyncSettings, notify: import("./notify.js").Notify}} parts
   */
  constructor({ store, chat, sync, notify }) {
    this.store = store;
    this.chat = chat;
    this.sync = sync;
    this.notify = notify;
    this.dialog = h("dialog", { className: "share-link", "aria-labelledby": "share-link-title" });
    document.body.append(this.dialog);
  }

  async create() {
    const conversation = this.chat.conversation;
    if (!conversation) return;
    const place = await this.sync.shareTarget();
    if (!place) return this.notify(t("share.linkNeedsSync"), { error: true, settings: true });
    try {
      const loaded = await this.store.loadConversation(conversation.id);
      if (!loaded) throw new Error(t("route.unknown"));
      const path = branchPath(loaded.messages, loaded.conversation.current_leaf);
      const messages = path.filter((m) => m.role === "user" || m.role === "assistant")
        .map((m) => ({ role: /** @type {"user" | "assistant"} */ (m.role), text: textOf(m) }));
      const { name, bytes, key } = await sealShared({ title: loaded.conversation.title, messages });
      await place.target.write(name, bytes, null);
      this.#showLink(place.address(name), key, place.folder);
    } catch (err) {
      this.notify(t("share.linkFailed", { message: err instanceof Error ? err.message : String(err) }), { error: true });
    }
  }

  /** @param {string} address @param {string} key @param {boolean} folder the file's address is only its name */
  #showLink(address, key, folder) {
    const site = new URL(document.baseURI);
    const link = h("input", { id: "share-link-url", readonly: true, spellcheck: "false" });
    const where = h("input", { id: "share-link-address", type: "url", spellcheck: "false" });
    const linkBox = /** @type {HTMLInputElement} */ (link);
    const whereBox = /** @type {HTMLInputElement} */ (where);
    whereBox.value = folder ? "" : address;
    const update = () => (linkBox.value = whereBox.value.trim() ? linkOf(site.href, whereBox.value.trim(), key) : "");
    whereBox.addEventListener("input", update);
    update();
    const copy = async () => {
      try {
        await navigator.clipboard.writeText(linkBox.value);
        this.notify(t("share.linkCopied"));
      } catch {
        linkBox.select(); // the clipboard refused: selected, for the user's own copy
      }
    };
    this.dialog.replaceChildren(h("div", { className: "dialog-body" },
      h("h2", { id: "share-link-title" }, t("share.linkTitle")),
      h("p", { className: "hint" }, folder ? t("share.linkFolderFile", { name: address }) : t("share.linkWritten")),
      h("label", { for: "share-link-address" }, t("share.linkAddress")), where,
      h("small", { className: "hint" }, t("share.linkAddressHint")),
      h("label", { for: "share-link-url" }, t("share.linkLabel")), link,
      h("small", { className: "hint" }, t("share.linkHint")),
      h("div", { className: "dialog-actions" },
        h("button", { type: "button", onclick: () => void copy() }, t("share.linkCopy")),
        h("button", { type: "button", onclick: () => this.dialog.close() }, t("settings.close")))));
    if (!this.dialog.open) this.dialog.showModal();
  }

  /** The viewer: `hash` is `#/shared/<address>&k=<key>`. @param {string} hash */
  async show(hash) {
    const link = parseLink(hash);
    const body = h("div", { className: "dialog-body" });
    const close = h("button", { type: "button", onclick: () => this.dialog.close() }, t("settings.close"));
    this.dialog.setAttribute("aria-labelledby", "shared-title");
    this.dialog.replaceChildren(body);
    const say = (/** @type {string} */ text) => body.replaceChildren(
      h("h2", { id: "shared-title" }, t("shared.title")), h("p", { className: "status-line error" }, text),
      h("div", { className: "dialog-actions" }, close));
    if (!this.dialog.open) this.dialog.showModal();
    if (!link) return say(t("shared.badLink"));
    say(t("shared.opening"));
    let shared;
    try {
      shared = await openShared(await this.#fetch(link.location), link.key);
    } catch (err) {
      return say(err instanceof SharedLinkError ? t(err.key, { host: hostOf(link.location) }) : String(err));
    }
    const images = new ImagePolicy();
    const items = shared.messages.map((m) => {
      const content = h("div", { className: m.role === "user" ? "content" : "content markdown" });
      if (m.role === "user") content.textContent = m.text;
      else renderMarkdown(content, m.text, { images, labels: markdownLabels() });
      return h("li", { className: `msg ${m.role}` }, content);
    });
    body.replaceChildren(h("h2", { id: "shared-title" }, t("shared.title")),
      h("h3", { className: "shared-conversation-title" }, shared.title),
      h("p", { className: "hint" }, t("shared.readOnly")),
      h("ol", { className: "transcript shared-transcript" }, ...items),
      h("div", { className: "dialog-actions" }, close));
  }

  /** @param {string} location */
  async #fetch(location) {
    let url;
    try {
      url = new URL(location);
    } catch {
      throw new SharedLinkError("shared.badLink");
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new SharedLinkError("shared.badLink");
    let response;
    try {
      response = await fetch(url, { credentials: "omit", referrerPolicy: "no-referrer", cache: "no-store" });
    } catch {
      throw new SharedLinkError("shared.unreachable");
    }
    if (response.status === 401 || response.status === 403) throw new SharedLinkError("shared.private");
    if (!response.ok) throw new SharedLinkError("shared.gone");
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (bytes.length > MAX_BYTES) throw new SharedLinkError("shared.tooLarge");
    return bytes;
  }
}

/** @param {string} location */
function hostOf(location) {
  try {
    return new URL(location).host;
  } catch {
    return location.slice(0, 80);
  }
}
