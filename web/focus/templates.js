/**
 * Focus memory's prompt templates, editable in the app (the core renders them: pycore/focus/prompts/).
 * A <details> under the focus panel: pick a template, edit it, Save (checked by the core first: an error
 * names the line and nothing is saved), Reset to default, and Preview the prompt the next turn would
 * send with the conversation's focus state.
 *
 *   const editor = new TemplatesEditor(element, {core, ready, templates, save, state, locale, t})
 *     templates() -> {name: source}   the user's edits (empty: the defaults)
 *     save({name: source})            keep them (Settings' preferences)
 *     state() -> focus state          for Preview
 *   editor.setT(t)
 */

import { h } from "../app/dom.js";

export class TemplatesEditor {
  constructor(element, { core, ready, templates, save, state, locale, t }) {
    Object.assign(this, { core, ready, templates, save, state, locale, t });
    this.defaults = null; // {name: source} in the current locale, from focus.templates
    this.chosen = null;
    this.root = h("details", { className: "focus-templates" });
    this.root.addEventListener("toggle", () => {
      if (this.root.open) this.#load().catch((err) => this.#problem(err.message));
    });
    element.append(this.root);
    this.#draw();
  }

  setT(t) {
    this.t = t;
    this.defaults = null;
    this.#draw();
    if (this.root.open) this.#load().catch((err) => this.#problem(err.message));
  }

  async #load() {
    await this.ready;
    const result = await this.core.call("focus.templates", { locale: this.locale() });
    this.defaults = result.templates;
    this.chosen ??= Object.keys(this.defaults)[0];
    this.#draw();
  }

  #draw() {
    const t = this.t;
    const summary = h("summary", {}, t("focus.templates"));
    if (!this.defaults) return void this.root.replaceChildren(summary, h("p", { className: "hint" }, t("focus.templates_loading")));
    const edits = this.templates();
    const select = h("select", { id: "focus-template-name", onchange: () => { this.chosen = select.value; this.#draw(); } },
      Object.keys(this.defaults).map((name) => h("option", { value: name }, edits[name] ? `${name} ✎` : name)));
    select.value = this.chosen;
    this.source = h("textarea", { id: "focus-template-source", rows: 10, spellcheck: "false" });
    this.source.value = edits[this.chosen] ?? this.defaults[this.chosen];
    this.status = h("p", { className: "focus-template-status", role: "status" });
    this.preview = h("pre", { className: "focus-template-preview", hidden: true });
    this.root.replaceChildren(summary,
      h("div", { className: "row" }, h("label", { for: "focus-template-name" }, t("focus.template")), select),
      h("div", { className: "row" }, h("label", { for: "focus-template-source" }, t("focus.template_source")), this.source),
      h("div", { className: "inline" },
        h("button", { type: "button", onclick: () => this.#saveEdit() }, t("focus.template_save")),
        h("button", { type: "button", disabled: !edits[this.chosen], onclick: () => this.#reset() }, t("focus.template_reset")),
        h("button", { type: "button", onclick: () => this.#preview() }, t("focus.template_preview"))),
      this.status, this.preview);
  }

  async #check(templates) {
    const result = await this.core.call("focus.templates", { locale: this.locale(), templates });
    return result.errors;
  }

  async #saveEdit() {
    try {
      const errors = await this.#check({ [this.chosen]: this.source.value });
      if (errors[this.chosen]) return this.#problem(this.t("focus.template_error", { error: errors[this.chosen] }));
      const edits = { ...this.templates() };
      if (this.source.value === this.defaults[this.chosen]) delete edits[this.chosen];
      else edits[this.chosen] = this.source.value;
      this.save(edits);
      const text = this.source.value;
      this.#draw();
      this.source.value = text;
      this.status.textContent = this.t("focus.template_saved");
    } catch (err) {
      this.#problem(err.message);
    }
  }

  #reset() {
    const edits = { ...this.templates() };
    delete edits[this.chosen];
    this.save(edits);
    this.#draw();
    this.status.textContent = this.t("focus.template_was_reset");
  }

  /** The prompt the next turn would send: the edit in the box applied, over the conversation's state. */
  async #preview() {
    try {
      const templates = { ...this.templates(), [this.chosen]: this.source.value };
      const errors = await this.#check({ [this.chosen]: this.source.value });
      if (errors[this.chosen]) return this.#problem(this.t("focus.template_error", { error: errors[this.chosen] }));
      const result = await this.core.call("focus.synthesize", { state: this.state(), text: this.t("focus.preview_message"),
                                                                locale: this.locale(), templates });
      const messages = result.messages.map((m) => `[${m.role}]\n${m.parts.filter((p) => p.type === "text").map((p) => p.text).join("")}`);
      this.preview.textContent = [`[system]\n${result.system}`, ...messages].join("\n\n");
      this.preview.hidden = false;
      this.status.textContent = this.t("focus.prompt", { tokens: result.tokens, budget: result.budget });
    } catch (err) {
      this.#problem(err.message);
    }
  }

  #problem(message) {
    if (!this.status) return;
    this.status.textContent = message;
    this.status.classList.add("error");
  }
}
