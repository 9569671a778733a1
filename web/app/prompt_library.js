/**
 * The prompt library: saved prompts with {{variables}}, listed in the "/" menu beside the MCP servers'
 * prompts. "Prompts" (above the message box) opens the library: add, edit, delete, export and import.
 *
 *   const library = new PromptLibrary({store, notify, draft: () => composerText})
 *   await library.load()
 *   library.button                  the "Prompts" button, for the page to place
 *   library.slashPrompts() -> [{name, description, arguments: [{name, required}], text, saved: true}]
 *                                   what the "/" menu lists (the composer fills the variables, then
 *                                   fillPrompt() puts the text in the box)
 */

import { fillPrompt, variablesOf } from "../store/prompts.js";
import { download, h } from "./dom.js";
import { messageOf } from "./error_notice.js";
import { onLanguageChange, t } from "./i18n.js";

export { fillPrompt };

/** @typedef {Awaited<ReturnType<import("../store/prompts.js").Prompts["save"]>>} SavedPrompt */

export class PromptLibrary {
  /**
   * @param {{store: import("../store/transcripts.js").Store, notify: import("./notify.js").Notify,
   *   draft?: () => string}} parts
   */
  constructor({ store, notify, draft = () => "" }) {
    onLanguageChange(() => this.render());
    this.store = store;
    this.notify = notify;
    this.draft = draft;
    /** @type {SavedPrompt[]} */
    this.prompts = [];
    /** @type {SavedPrompt | null} */
    this.editing = null; // the saved prompt being edited, or null for a new one
    this.button = h("button", { type: "button", className: "prompts-open", onclick: () => this.open() });
    this.dialog = h("dialog", { className: "prompt-library", "aria-labelledby": "prompt-library-title" });
    document.body.append(this.dialog);
    this.render();
  }

  async load() {
    this.prompts = await this.store.prompts.list();
  }

  slashPrompts() {
    return this.prompts.map((p) => ({
      name: p.name, description: firstLine(p.text), text: p.text, saved: true,
      arguments: variablesOf(p.text).map((name) => ({ name, required: false })),
    }));
  }

  render() {
    this.button.textContent = t("prompts.open");
    if (this.dialog.open) this.#draw();
  }

  async open() {
    await this.load();
    this.editing = null;
    this.#draw(this.draft());
    this.dialog.showModal();
  }

  #draw(draftText = "") {
    const name = h("input", { id: "prompt-name", autocomplete: "off", value: this.editing?.name ?? "",
                              placeholder: t("prompts.namePlaceholder") });
    const text = h("textarea", { id: "prompt-text", rows: 6 });
    text.value = this.editing?.text ?? draftText;
    const form = h("form", { className: "dialog-body", novalidate: true },
      h("h2", { id: "prompt-library-title" }, t("prompts.title")),
      h("ul", { className: "prompt-list", "aria-label": t("prompts.saved") },
        this.prompts.length ? this.prompts.map((p) => h("li", {},
          h("code", {}, `/${p.name}`), h("span", { className: "hint" }, firstLine(p.text)),
          h("button", { type: "button", "aria-label": `${t("prompts.edit")}: ${p.name}`,
                        onclick: () => { this.editing = p; this.#draw(); } }, t("prompts.edit")),
          h("button", { type: "button", className: "danger", "aria-label": `${t("prompts.delete")}: ${p.name}`,
                        onclick: () => this.#delete(p) }, t("prompts.delete"))))
          : h("li", { className: "hint" }, t("prompts.none"))),
      h("div", { className: "row" }, h("label", { for: "prompt-name" }, t("prompts.name")), name),
      h("div", { className: "row" }, h("label", { for: "prompt-text" }, t("prompts.text")), text,
        h("p", { className: "hint" }, t("prompts.variablesHint"))),
      h("div", { className: "dialog-actions" },
        h("button", { type: "submit", className: "primary" }, t(this.editing ? "prompts.update" : "prompts.save")),
        h("button", { type: "button", onclick: () => { this.editing = null; this.#draw(); } }, t("prompts.new")),
        h("button", { type: "button", onclick: () => this.#export() }, t("prompts.export")),
        h("button", { type: "button", onclick: () => this.#chooseImport() }, t("prompts.import")),
        h("button", { type: "button", onclick: () => this.dialog.close() }, t("prompts.close"))));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      try {
        const saved = await this.store.prompts.save({ id: this.editing?.id, name: name.value, text: text.value });
        await this.load();
        this.editing = null;
        this.#draw();
        this.notify(t("prompts.savedOne", { name: saved.name }));
      } catch (err) {
        this.notify(messageOf(err), { error: true });
      }
    });
    this.dialog.replaceChildren(form);
  }

  /** @param {SavedPrompt} prompt */
  async #delete(prompt) {
    await this.store.prompts.delete(prompt.id);
    await this.load();
    if (this.editing?.id === prompt.id) this.editing = null;
    this.#draw();
  }

  async #export() {
    download(new Blob([await this.store.prompts.exportJSON()], { type: "application/json" }), "orizuru-prompts.json");
  }

  #chooseImport() {
    const input = h("input", { type: "file", accept: "application/json,.json", hidden: true });
    input.addEventListener("change", async () => {
      try {
        const file = input.files?.[0];
        if (!file) return;
        const { imported, copies, skipped } = await this.store.prompts.importJSON(await file.text());
        await this.load();
        this.#draw();
        this.notify([t("prompts.imported", { count: imported }), copies ? t("prompts.importedCopies", { count: copies }) : "",
                     skipped ? t("prompts.importedSkipped", { count: skipped }) : ""].filter(Boolean).join(" "));
      } catch (err) {
        this.notify(t("prompts.importFailed", { message: messageOf(err) }), { error: true, timeout: 0 });
      } finally {
        input.remove();
      }
    });
    this.dialog.append(input);
    input.click();
  }
}

/** @param {unknown} text */
function firstLine(text) {
  const line = String(text).trim().split("\n", 1)[0];
  return line.length > 80 ? `${line.slice(0, 77)}…` : line;
}
