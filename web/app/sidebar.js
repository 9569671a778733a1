/**
 * The conversations sidebar: list, New chat, rename, delete with undo, search across all text,
 * Export (one / all; JSON or Markdown) and Import (validated by the store: a bad file changes nothing).
 *
 * Each imported conversation's focus state is checked first by `validateFocus(state)` (focus.validate in
 * the worker): a bad one stops the import with the conversation and field named, and nothing is written.
 *
 *   const sidebar = new Sidebar({store, chat, notify, validateFocus})
 *   await sidebar.refresh()        redraw the list (after any change, and on other tabs' changes)
 *   sidebar.markActive(id)
 */

import { download, h } from "./dom.js";
import { t } from "./i18n.js";

const UNDO_MS = 10_000;

export class Sidebar {
  constructor({ store, chat, notify, validateFocus = null }) {
    Object.assign(this, { store, chat, notify, validateFocus });
    this.list = document.getElementById("conversations");
    this.results = document.getElementById("search-results");
    this.search = document.getElementById("search");
    this.activeId = null;
    this.conversations = [];
    document.getElementById("new-chat").addEventListener("click", () => this.newChat());
    document.getElementById("export").addEventListener("click", () => this.openExport());
    document.getElementById("import").addEventListener("click", () => document.getElementById("import-file").click());
    document.getElementById("import-file").addEventListener("change", (ev) => this.#import(ev.target));
    document.getElementById("export-close").addEventListener("click", () => document.getElementById("export-dialog").close());
    document.getElementById("export-one-json").addEventListener("click", () => this.#export("json"));
    document.getElementById("export-one-markdown").addEventListener("click", () => this.#export("markdown"));
    document.getElementById("export-all-json").addEventListener("click", () => this.#exportAll());
    let timer = null;
    this.search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.#search(this.search.value.trim()), 150);
    });
  }

  newChat() {
    document.body.classList.remove("sidebar-open");
    this.chat.newChat();
    this.markActive(null);
    document.getElementById("message").focus();
  }

  markActive(id) {
    this.activeId = id;
    for (const li of this.list.children) li.classList.toggle("active", li.dataset.id === id);
    for (const li of this.list.children) {
      const open = li.querySelector(".open");
      if (open) open.setAttribute("aria-current", li.dataset.id === id ? "page" : "false");
    }
  }

  async refresh() {
    this.conversations = await this.store.listConversations();
    this.list.replaceChildren(...this.conversations.map((c) => this.#item(c)));
    this.markActive(this.activeId);
  }

  #item(conv) {
    const title = conv.title || t("nav.untitled");
    const open = h("button", { type: "button", className: "open", onclick: () => this.#open(conv.id) }, title);
    const li = h("li", { dataset: { id: conv.id } }, open,
      h("button", { type: "button", className: "rename icon", "aria-label": `${t("nav.rename")}: ${title}`,
                    title: t("nav.rename"), onclick: () => this.#rename(li, conv) }, "✎"),
      h("button", { type: "button", className: "delete icon", "aria-label": `${t("nav.delete")}: ${title}`,
                    title: t("nav.delete"), onclick: () => this.#delete(conv) }, "×"));
    return li;
  }

  async #open(id) {
    try {
      await this.chat.open(id);
      this.markActive(id);
      document.body.classList.remove("sidebar-open");
    } catch (err) {
      this.notify(err.message);
    }
  }

  #rename(li, conv) {
    const field = h("input", { type: "text", className: "rename-field", "aria-label": t("nav.renameField"),
                               value: conv.title ?? "" });
    const done = async (save) => {
      if (save && field.value.trim() && field.value.trim() !== conv.title) {
        await this.store.renameConversation(conv.id, field.value.trim());
        if (this.chat.conversation?.id === conv.id) this.chat.conversation.title = field.value.trim();
      }
      await this.refresh();
    };
    field.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") done(true);
      if (ev.key === "Escape") {
        ev.stopPropagation();
        done(false);
      }
    });
    field.addEventListener("blur", () => done(true), { once: true });
    li.replaceChildren(field);
    field.focus();
    field.select();
  }

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

  async #search(query) {
    if (!query) {
      this.results.hidden = true;
      this.list.hidden = false;
      return;
    }
    const hits = await this.store.search(query);
    const titles = new Map(this.conversations.map((c) => [c.id, c.title]));
    this.results.replaceChildren(...(hits.length ? hits.map((hit) => h("li", {},
      h("button", { type: "button", className: "open", onclick: () => this.#open(hit.conversation_id) },
        h("span", { className: "hit-title" }, titles.get(hit.conversation_id) || t("nav.untitled")),
        h("span", { className: "snippet" }, hit.snippet ?? "")))) : [h("li", { className: "empty" }, t("nav.noResults"))]));
    this.results.hidden = false;
    this.list.hidden = true;
  }

  openExport() {
    const dialog = document.getElementById("export-dialog");
    const hasOne = Boolean(this.chat.conversation);
    document.getElementById("export-one-json").disabled = !hasOne;
    document.getElementById("export-one-markdown").disabled = !hasOne;
    document.getElementById("export-none").hidden = hasOne;
    dialog.showModal();
  }

  async #export(format) {
    const conv = this.chat.conversation;
    if (!conv) return;
    const blob = await this.store.exportConversation(conv.id, format);
    download(blob, `${slug(conv.title)}.${format === "json" ? "json" : "md"}`);
    document.getElementById("export-dialog").close();
  }

  async #exportAll() {
    const blob = await this.store.exportAll("json");
    download(blob, `orizuru-${new Date().toISOString().slice(0, 10)}.json`);
    document.getElementById("export-dialog").close();
  }

  async #import(input) {
    const file = input.files?.[0];
    input.value = "";
    if (!file) return;
    try {
      const { imported } = await this.store.importJSON(await this.#checkFocus(await file.text()));
      await this.refresh();
      this.notify(t("nav.imported", { count: imported }));
    } catch (err) {
      this.notify(t("nav.importFailed", { message: err.message }), { error: true });
    }
  }

  /** The file's text with every conversation's focus state validated (and normalised) by the core. */
  async #checkFocus(text) {
    let data;
    try {
      data = JSON.parse(text);
    } catch {
      return text; // not JSON: the store says so
    }
    const conversations = Array.isArray(data?.conversations) ? data.conversations : [];
    if (!this.validateFocus || !conversations.some((c) => c && c.focus != null)) return text;
    for (const [i, conversation] of conversations.entries()) {
      if (conversation?.focus == null) continue;
      try {
        conversation.focus = await this.validateFocus(conversation.focus);
      } catch (err) {
        throw new Error(`conversations[${i}] (${conversation.title ?? conversation.id}): ${err.message}`, { cause: err });
      }
    }
    return JSON.stringify(data);
  }
}

function slug(title) {
  return (title || "conversation").replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-|-$/g, "").slice(0, 60) || "conversation";
}
