/**
 * The conversations sidebar: list, New chat, rename, delete with undo, search across all text,
 * Export (one / all; JSON or Markdown) and Import (validated by the store: a bad file changes nothing).
 *
 * The list is grouped: Pinned first, then each folder (a name conversations share: "Move to folder"),
 * then the rest by date (Today, Yesterday, Previous 7 days, Previous 30 days, then by month). Search hits
 * show the matched words marked. "Select" turns on checkboxes for deleting many at once (one Undo).
 *
 * Each imported conversation's focus state is checked first by `validateFocus(state)` (focus.validate in
 * the worker): a bad one stops the import with the conversation and field named, and nothing is written.
 *
 * Each row is one Tab stop (web/app/rows.js): the arrows move between rows and along a row's actions.
 *
 *   const sidebar = new Sidebar({store, chat, notify, validateFocus})
 *   await sidebar.refresh()        redraw the list (after any change, and on other tabs' changes)
 *   sidebar.markActive(id)
 */

import { byId, download, h } from "./dom.js";
import { messageOf } from "./error_notice.js";
import { sharePage } from "./share_page.js";
import { onLanguageChange, t } from "./i18n.js";
import { keyboardRows, tabStop } from "./rows.js";

/**
 * @typedef {{id: string, title?: string | null, updated: number, pinned?: boolean, folder?: string | null}} Row
 *   what the sidebar reads of a stored conversation (store/transcripts.js)
 * @typedef {{label?: {key: string, vars?: Record<string, unknown>}, folder?: string}} GroupHead
 * @typedef {GroupHead & {items: Row[]}} Group
 */

const UNDO_MS = 10_000;
const MAX_HITS = 100; // conversations listed for a search: more is a query to narrow, not a list to scroll
const DAY = 24 * 60 * 60 * 1000;

export class Sidebar {
  #searchPrepared = false;

  /**
   * @param {{store: import("../store/transcripts.js").Store, chat: import("./chat.js").Chat,
   *   notify: import("./notify.js").Notify, validateFocus?: ((state: unknown) => Promise<unknown>) | null}} parts
   */
  constructor({ store, chat, notify, validateFocus = null }) {
    onLanguageChange(() => this.refresh().catch(() => {}));
    this.store = store;
    this.chat = chat;
    this.notify = notify;
    this.validateFocus = validateFocus;
    this.list = byId("conversations");
    this.results = byId("search-results");
    this.search = byId("search", HTMLInputElement);
    /** @type {string | null} */
    this.activeId = null;
    /** @type {Row[]} */
    this.conversations = [];
    this.selecting = false;
    /** @type {Set<string>} */
    this.selected = new Set();
    /** @type {string | null} */
    this.rowId = null; // the row the keyboard was last on: Tab comes back to it
    keyboardRows(this.list, (li) => { this.rowId = li?.dataset.id ?? null; });
    keyboardRows(this.results);
    this.selectButton = h("button", { type: "button", className: "select-toggle", "aria-pressed": "false",
                                      onclick: () => this.#toggleSelecting() });
    this.deleteSelected = h("button", { type: "button", className: "danger", hidden: true,
                                        onclick: () => this.#deleteSelected() });
    this.bulk = h("div", { className: "bulk-bar" }, this.selectButton, this.deleteSelected);
    this.list.before(this.bulk);
    this.#showBulk();
    this.#wire();
  }

  #wire() {
    const exportDialog = byId("export-dialog", HTMLDialogElement);
    const importFile = byId("import-file", HTMLInputElement);
    byId("new-chat").addEventListener("click", () => this.newChat());
    byId("export").addEventListener("click", () => this.openExport());
    byId("import").addEventListener("click", () => importFile.click());
    importFile.addEventListener("change", () => this.#import(importFile));
    byId("export-close").addEventListener("click", () => exportDialog.close());
    byId("export-one-json").addEventListener("click", () => this.#export("json"));
    byId("export-one-markdown").addEventListener("click", () => this.#export("markdown"));
    byId("export-one-html").addEventListener("click", () => this.#sharePage());
    byId("export-all-json").addEventListener("click", () => this.#exportAll());
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    this.search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.#search(this.search.value.trim()), 150);
    });
  }

  newChat() {
    document.body.classList.remove("sidebar-open");
    this.chat.newChat();
    this.markActive(null);
    byId("message").focus();
  }

  /** @param {string | null} id */
  markActive(id) {
    this.activeId = id;
    for (const li of /** @type {NodeListOf<HTMLElement>} */ (this.list.querySelectorAll("li[data-id]"))) {
      li.classList.toggle("active", li.dataset.id === id);
      li.querySelector(".open")?.setAttribute("aria-current", li.dataset.id === id ? "page" : "false");
    }
  }

  async refresh() {
    this.conversations = await this.store.listConversations();
    const known = new Set(this.conversations.map((c) => c.id));
    for (const id of this.selected) if (!known.has(id)) this.selected.delete(id);
    // The keyboard's place survives the redraw (opening a conversation redraws the list under the focus).
    const focused = this.list.contains(document.activeElement) ? document.activeElement : null;
    const refocus = focused && { id: focused.closest("li[data-id]")?.getAttribute("data-id"),
                                 kind: focused.classList[0] };
    this.list.replaceChildren(...groupConversations(this.conversations, Date.now()).map(({ label, folder, items }) =>
      h("li", { className: "group" },
        h("h3", { className: folder ? "group-label folder-label" : "group-label" },
          folder || t(label?.key ?? "", label?.vars)),
        h("ul", {}, items.map((c) => this.#item(c))))));
    this.list.classList.toggle("selecting", this.selecting);
    this.#showBulk();
    this.markActive(this.activeId);
    /** @param {string | null | undefined} id */
    const row = (id) => (id ? this.list.querySelector(`li[data-id="${CSS.escape(id)}"]`) : null);
    if (refocus?.id && refocus.kind) {
      const control = row(refocus.id)?.querySelector(`:scope > .${refocus.kind}`);
      if (control instanceof HTMLElement) control.focus();
    }
    tabStop(this.list, row(this.rowId) ?? row(this.activeId));
    if (!this.#searchPrepared) {
      // After the first draw, while the page is idle, the store reads every message's text once for
      // search (store/search.js), rather than while someone waits for their first search.
      this.#searchPrepared = true;
      (window.requestIdleCallback ?? setTimeout)(() => this.store.prepareSearch().catch(() => {}));
    }
  }

  /** @param {Row} conv */
  #item(conv) {
    const title = conv.title || t("nav.untitled");
    const open = h("button", { type: "button", className: "open", "aria-describedby": "nav-row-keys",
                               onclick: () => this.#open(conv.id) }, title);
    const check = this.selecting
      ? h("input", { type: "checkbox", className: "select", "aria-label": `${t("nav.select")}: ${title}`,
                     checked: this.selected.has(conv.id),
                     onchange: (/** @type {Event} */ ev) => {
                       if (/** @type {HTMLInputElement} */ (ev.target).checked) this.selected.add(conv.id);
                       else this.selected.delete(conv.id);
                       this.#showBulk();
                     } })
      : null;
    const li = h("li", { dataset: { id: conv.id }, className: conv.pinned ? "pinned" : "" }, check, open,
      h("button", { type: "button", className: "pin icon", "aria-pressed": String(Boolean(conv.pinned)),
                    "aria-label": `${t(conv.pinned ? "nav.unpin" : "nav.pin")}: ${title}`,
                    title: t(conv.pinned ? "nav.unpin" : "nav.pin"), onclick: () => this.#pin(conv) }, "📌"),
      h("button", { type: "button", className: "folder icon", "aria-label": `${t("nav.moveToFolder")}: ${title}`,
                    title: t("nav.moveToFolder"), onclick: () => this.#moveToFolder(li, conv) }, "🗀"),
      h("button", { type: "button", className: "rename icon", "aria-label": `${t("nav.rename")}: ${title}`,
                    title: t("nav.rename"), onclick: () => this.#rename(li, conv) }, "✎"),
      h("button", { type: "button", className: "delete icon", "aria-label": `${t("nav.delete")}: ${title}`,
                    title: t("nav.delete"), onclick: () => this.#delete(conv) }, "×"));
    return li;
  }

  /** @param {Row} conv */
  async #pin(conv) {
    await this.store.setPinned(conv.id, !conv.pinned);
    await this.refresh();
  }

  /**
   * A field naming the folder (the existing ones offered); empty: out of any folder.
   * @param {HTMLElement} li
   * @param {Row} conv
   */
  #moveToFolder(li, conv) {
    const names = [...new Set(this.conversations.map((c) => c.folder).filter(Boolean))].sort();
    const list = h("datalist", { id: `folders-${conv.id}` }, names.map((n) => h("option", { value: n })));
    const field = h("input", { type: "text", className: "rename-field", "aria-label": t("nav.folderField"),
                               list: list.id, value: conv.folder ?? "", placeholder: t("nav.noFolder") });
    /** @param {boolean} save */
    const done = async (save) => {
      if (save && (field.value.trim() || null) !== (conv.folder ?? null)) await this.store.setFolder(conv.id, field.value);
      await this.refresh();
    };
    whenEdited(field, done);
    li.replaceChildren(field, list);
    field.focus();
  }

  // ------------------------------------------------------------------ selecting many

  #showBulk() {
    this.selectButton.textContent = t(this.selecting ? "nav.doneSelecting" : "nav.selectMany");
    this.selectButton.setAttribute("aria-pressed", String(this.selecting));
    this.bulk.hidden = this.conversations.length === 0 && !this.selecting;
    this.deleteSelected.hidden = !this.selecting;
    this.deleteSelected.disabled = this.selected.size === 0;
    this.deleteSelected.textContent = t("nav.deleteSelected", { count: this.selected.size });
  }

  async #toggleSelecting() {
    this.selecting = !this.selecting;
    this.selected.clear();
    await this.refresh();
  }

  async #deleteSelected() {
    const doomed = this.conversations.filter((c) => this.selected.has(c.id));
    if (!doomed.length) return;
    /** @type {string[]} */
    const tokens = [];
    for (const conv of doomed) tokens.push(await this.store.deleteConversation(conv.id));
    if (doomed.some((c) => c.id === this.chat.conversation?.id)) this.chat.newChat();
    this.selecting = false;
    this.selected.clear();
    await this.refresh();
    this.notify(t("nav.deletedMany", { count: doomed.length }), {
      action: { label: t("nav.undo"), run: async () => {
        for (const token of tokens) await this.store.undoDelete(token);
        await this.refresh();
      } },
      timeout: UNDO_MS,
    });
  }

  /**
   * @param {string} id
   * @param {{at?: string | null, query?: string} | null} [at]
   */
  async #open(id, at = null) {
    try {
      await this.chat.open(id, at ?? {});
      this.markActive(id);
      document.body.classList.remove("sidebar-open");
    } catch (err) {
      this.notify(messageOf(err));
    }
  }

  /**
   * @param {HTMLElement} li
   * @param {Row} conv
   */
  #rename(li, conv) {
    const field = h("input", { type: "text", className: "rename-field", "aria-label": t("nav.renameField"),
                               value: conv.title ?? "" });
    /** @param {boolean} save */
    const done = async (save) => {
      if (save && field.value.trim() && field.value.trim() !== conv.title) {
        await this.store.renameConversation(conv.id, field.value.trim());
        if (this.chat.conversation?.id === conv.id) this.chat.conversation.title = field.value.trim();
      }
      await this.refresh();
    };
    whenEdited(field, done);
    li.replaceChildren(field);
    field.focus();
    field.select();
  }

  /** @param {Row} conv */
  async #delete(conv) {
    const token = await this.store.deleteConversation(conv.id);
    if (this.chat.conversation?.id === conv.id) this.chat.newChat();
    await this.refresh();
    this.notify(t("nav.deleted", { title: conv.title || t("nav.untitled") }), {
      action: { label: t("nav.undo"), run: async () => {
        await this.store.undoDelete(token);
        await this.refresh();
      } },
      timeout: UNDO_MS,
    });
  }

  /** @param {string} query */
  async #search(query) {
    if (!query) {
      this.results.hidden = true;
      this.list.hidden = false;
      return;
    }
    const hits = await this.store.search(query);
    if (this.search.value.trim() !== query) return; // typed on meanwhile: that search draws
    const titles = new Map(this.conversations.map((c) => [c.id, c.title]));
    // One entry per conversation (its first hit, and how many more), the first MAX_HITS of them.
    /** @type {Map<string, {hit: {conversation_id: string, message_id: string | null, snippet?: string}, more: number}>} */
    const byConversation = new Map();
    for (const hit of hits) {
      const entry = byConversation.get(hit.conversation_id);
      if (entry) entry.more += 1;
      else byConversation.set(hit.conversation_id, { hit, more: 0 });
    }
    const entries = [...byConversation.values()];
    const items = entries.slice(0, MAX_HITS).map(({ hit, more }) => h("li", {},
      h("button", { type: "button", className: "open",
                    onclick: () => this.#open(hit.conversation_id, { at: hit.message_id, query }) },
        h("span", { className: "hit-title" }, marked(titles.get(hit.conversation_id) || t("nav.untitled"), query)),
        h("span", { className: "snippet" }, marked(hit.snippet ?? "", query)),
        more ? h("span", { className: "snippet more" }, t("nav.moreHits", { count: more })) : null)));
    if (entries.length > MAX_HITS) {
      items.push(h("li", { className: "empty" }, t("nav.manyHits", { shown: MAX_HITS, count: entries.length })));
    }
    this.results.replaceChildren(...(items.length ? items : [h("li", { className: "empty" }, t("nav.noResults"))]));
    tabStop(this.results, null);
    this.results.hidden = false;
    this.list.hidden = true;
  }

  openExport() {
    const dialog = byId("export-dialog", HTMLDialogElement);
    const hasOne = Boolean(this.chat.conversation);
    byId("export-one-json", HTMLButtonElement).disabled = !hasOne;
    byId("export-one-markdown", HTMLButtonElement).disabled = !hasOne;
    byId("export-one-html", HTMLButtonElement).disabled = !hasOne;
    byId("export-one-link", HTMLButtonElement).disabled = !hasOne;
    byId("export-none").hidden = hasOne;
    dialog.showModal();
  }

  /** @param {"json" | "markdown"} format */
  async #export(format) {
    const conv = this.chat.conversation;
    if (!conv) return;
    const blob = await this.store.exportConversation(conv.id, format);
    download(blob, `${slug(conv.title)}.${format === "json" ? "json" : "md"}`);
    byId("export-dialog", HTMLDialogElement).close();
  }

  /** What the transcript shows, as one page with no script that loads nothing (share_page.js). */
  async #sharePage() {
    const conv = this.chat.conversation;
    if (!conv) return;
    const blob = await sharePage(byId("transcript"), conv.title);
    download(blob, `${slug(conv.title)}.html`);
    byId("export-dialog", HTMLDialogElement).close();
  }

  async #exportAll() {
    const blob = await this.store.exportAll("json");
    download(blob, `orizuru-${new Date().toISOString().slice(0, 10)}.json`);
    byId("export-dialog", HTMLDialogElement).close();
  }

  /** @param {HTMLInputElement} input */
  async #import(input) {
    const file = input.files?.[0];
    input.value = "";
    if (!file) return;
    try {
      const result = await this.store.importJSON(await this.#checkFocus(await file.text()));
      await this.refresh();
      this.notify(importSummary(result), { kind: "import" });
    } catch (err) {
      this.notify(t("nav.importFailed", { message: messageOf(err) }), { error: true });
    }
  }

  /**
   * The file's text with every conversation's focus state validated (and normalised) by the core.
   * @param {string} text
   */
  async #checkFocus(text) {
    /** @type {{conversations?: unknown} | null} */
    let data;
    try {
      data = JSON.parse(text);
    } catch {
      return text; // not JSON: the store says so
    }
    /** @type {({focus?: unknown, title?: string, id?: string} | null)[]} */
    const conversations = Array.isArray(data?.conversations) ? data.conversations : [];
    if (!this.validateFocus || !conversations.some((c) => c && c.focus != null)) return text;
    for (const [i, conversation] of conversations.entries()) {
      if (conversation?.focus == null) continue;
      try {
        conversation.focus = await this.validateFocus(conversation.focus);
      } catch (err) {
        throw new Error(`conversations[${i}] (${conversation.title ?? conversation.id}): ${messageOf(err)}`, { cause: err });
      }
    }
    return JSON.stringify(data);
  }
}

/**
 * The sidebar's groups, in order: Pinned, each folder (by name), then by the day of the last change:
 * Today, Yesterday, Previous 7 days, Previous 30 days, then one per month. Each group keeps the store's
 * order (most recently changed first). `label` is an i18n key with its values; a folder has `folder`.
 */
/**
 * @param {Row[]} conversations
 * @param {number} now
 * @returns {Group[]}
 */
export function groupConversations(conversations, now) {
  const startOfToday = new Date(now).setHours(0, 0, 0, 0);
  /** @type {Map<string, Group>} */
  const groups = new Map();
  /** @type {(key: string, make: () => GroupHead, conv: Row) => void} */
  const add = (key, make, conv) => {
    const group = groups.get(key) ?? { ...make(), items: [] };
    groups.set(key, group);
    group.items.push(conv);
  };
  for (const conv of conversations) {
    if (conv.pinned) add("0pinned", () => ({ label: { key: "nav.pinned" } }), conv);
    else if (conv.folder) add(`1${conv.folder}`, () => ({ folder: conv.folder ?? undefined }), conv);
    else {
      const age = startOfToday - conv.updated;
      if (conv.updated >= startOfToday) add("2today", () => ({ label: { key: "nav.today" } }), conv);
      else if (age <= DAY) add("3yesterday", () => ({ label: { key: "nav.yesterday" } }), conv);
      else if (age <= 7 * DAY) add("4week", () => ({ label: { key: "nav.previous7" } }), conv);
      else if (age <= 30 * DAY) add("5month", () => ({ label: { key: "nav.previous30" } }), conv);
      else {
        const date = new Date(conv.updated);
        const month = `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, "0")}`;
        add(`6${String(9999 - date.getFullYear())}${String(12 - date.getMonth()).padStart(2, "0")}`,
            () => ({ label: { key: "nav.month", vars: { month } } }), conv);
      }
    }
  }
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, group]) => group);
}

/**
 * What an import did, in one message: how many came in, as copies, or were skipped, and why (store/exchange.js).
 * @param {{imported: number, copied: number, skipped: number}} result
 */
function importSummary({ imported, copied, skipped }) {
  const said = [imported + copied ? t("nav.imported", { count: imported + copied }) : t("nav.importedNone")];
  if (copied) said.push(t("nav.importCopies", { count: copied }));
  if (skipped) said.push(t("nav.importSkipped", { count: skipped }));
  return said.join(" ");
}

/**
 * `text` as text nodes with each occurrence of the query's words in <mark> (never parsed as HTML).
 * @param {string} text
 * @param {string} query
 * @returns {string | (string | HTMLElement)[]}
 */
export function marked(text, query) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length || !text) return text;
  const pattern = new RegExp(words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "gi");
  /** @type {(string | HTMLElement)[]} */
  const out = [];
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) out.push(text.slice(last, match.index));
    out.push(h("mark", {}, match[0]));
    last = match.index + match[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/**
 * An in-place field: Enter or leaving it saves, Esc cancels; `done(save)` runs once.
 * @param {HTMLInputElement} field
 * @param {(save: boolean) => unknown} done
 */
function whenEdited(field, done) {
  let finished = false;
  /** @param {boolean} save */
  const finish = (save) => {
    if (finished) return;
    finished = true;
    done(save);
  };
  field.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") finish(true);
    if (ev.key === "Escape") {
      ev.stopPropagation();
      finish(false);
    }
  });
  field.addEventListener("blur", () => finish(true), { once: true });
}

/** @param {string | null | undefined} title */
function slug(title) {
  return (title || "conversation").replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-|-$/g, "").slice(0, 60) || "conversation";
}
