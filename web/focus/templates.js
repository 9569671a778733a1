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

/**
 * @typedef {Record<string, string>} TemplateSources   template name -> its source
 * @typedef {{core: Pick<import("../client/orizuru.js").Agent, "call">, ready: Promise<unknown>,
 *   templates: () => TemplateSources, save: (edits: TemplateSources) => void,
 *   state: () => import("../types/contract").Params<"focus.synthesize">["state"], locale: () => string,
 *   t: import("./panel.js").Translate}} EditorOptions
 * @typedef {{name: string, defaults: TemplateSources, source: HTMLTextAreaElement, status: HTMLElement,
 *   preview: HTMLElement}} Shown   the template on screen and the elements that show it
 */

export class TemplatesEditor {
  /** @param {Element} element @param {EditorOptions} options */
  constructor(element, { core, ready, templates, save, state, locale, t }) {
    this.core = core;
    this.ready = ready;
    this.templates = templates;
    this.save = save;
    this.state = state;
    this.locale = locale;
    this.t = t;
    /** @type {TemplateSources | null} */
    this.defaults = null; // {name: source} in the current locale, from focus.templates
    /** @type {string | null} */
    this.chosen = null;
    /** @type {HTMLTextAreaElement | null} */
    this.source = null;
    /** @type {HTMLElement | null} */
    this.status = null;
    /** @type {HTMLElement | null} */
    this.preview = null;
    this.root = /** @type {HTMLDetailsElement} */ (h("details", { className: "focus-templates" }));
    this.root.addEventListener("toggle", () => {
      if (this.root.open) this.#load().catch((err) => this.#problem(err.message));
    });
    element.append(this.root);
    this.#draw();
  }

  /** @param {import("./panel.js").Translate} t */
  setT(t) {
    this.t = t;
    this.defaults = null;
    this.#draw();
    if (this.root.open) this.#load().catch((err) => this.#problem(err.message));
  }

  async #load() {
    await this.ready;
    const result = await this.core.call("focus.templates", { locale: this.locale() });
    this.defaults = sourcesOf(result.templates);
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
    const chosen = this.chosen ?? "";
    select.value = chosen;
    this.source = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: "focus-template-source", rows: 10, spellcheck: "false" }));
    this.source.value = edits[chosen] ?? this.defaults[chosen];
    const status = h("p", { className: "focus-template-status", role: "status" });
    const preview = h("pre", { className: "focus-template-preview", hidden: true });
    this.status = status;
    this.preview = preview;
    this.root.replaceChildren(summary,
      h("div", { className: "row" }, h("label", { for: "focus-template-name" }, t("focus.template")), select),
      h("div", { className: "row" }, h("label", { for: "focus-template-source" }, t("focus.template_source")), this.source),
      h("div", { className: "inline" },
        h("button", { type: "button", onclick: () => this.#saveEdit() }, t("focus.template_save")),
        h("button", { type: "button", disabled: !edits[chosen], onclick: () => this.#reset() }, t("focus.template_reset")),
        h("button", { type: "button", onclick: () => this.#preview() }, t("focus.template_preview"))),
      status, preview);
  }

  /** @param {TemplateSources} templates @returns {Promise<Record<string, string | undefined>>} */
  async #check(templates) {
    const result = await this.core.call("focus.templates", { locale: this.locale(), templates });
    return result.errors ?? {};
  }

  /** What is on screen: there whenever the buttons that act on it are. */
  #shown() {
    const { chosen: name, defaults, source, status, preview } = this;
    if (name === null || !defaults || !source || !status || !preview) throw new Error("no template is shown");
    return { name, defaults, source, status, preview };
  }

  async #saveEdit() {
    try {
      const { name, defaults, source } = this.#shown();
      const errors = await this.#check({ [name]: source.value });
      if (errors[name]) return this.#problem(this.t("focus.template_error", { error: errors[name] }));
      const edits = { ...this.templates() };
      if (source.value === defaults[name]) delete edits[name];
      else edits[name] = source.value;
      this.save(edits);
      const text = source.value;
      this.#draw();
      const shown = this.#shown();
      shown.source.value = text;
      shown.status.textContent = this.t("focus.template_saved");
    } catch (err) {
      this.#problem(/** @type {Error} */ (err).message);
    }
  }

  #reset() {
    const edits = { ...this.templates() };
    delete edits[this.#shown().name];
    this.save(edits);
    this.#draw();
    this.#shown().status.textContent = this.t("focus.template_was_reset");
  }

  /** The prompt the next turn would send: the edit in the box applied, over the conversation's state. */
  async #preview() {
    try {
      const { name, source, status, preview } = this.#shown();
      const templates = { ...this.templates(), [name]: source.value };
      const errors = await this.#check({ [name]: source.value });
      if (errors[name]) return this.#problem(this.t("focus.template_error", { error: errors[name] }));
      const result = await this.core.call("focus.synthesize", { state: this.state(), text: this.t("focus.preview_message"),
                                                                locale: this.locale(), templates });
      const messages = result.messages.map((m) => `[${m.role}]\n${(m.parts ?? []).flatMap((p) => (p.type === "text" ? [p.text] : [])).join("")}`);
      preview.textContent = [`[system]\n${result.system}`, ...messages].join("\n\n");
      preview.hidden = false;
      status.textContent = this.t("focus.prompt", { tokens: result.tokens, budget: result.budget });
    } catch (err) {
      this.#problem(/** @type {Error} */ (err).message);
    }
  }

  /**
   * What went wrong, under the form; before the form is there (the templates did not load), in its place.
   * @param {string} message
   */
  #problem(message) {
    if (!this.status) {
      this.root.replaceChildren(h("summary", {}, this.t("focus.templates")),
        h("p", { className: "hint error", role: "alert" }, this.t("focus.templates_failed", { error: message })));
      return;
    }
    this.status.textContent = message;
    this.status.classList.add("error");
  }
}

/**
 * The defaults focus.templates answered, each one's source.
 * @param {Record<string, string | undefined>} templates
 * @returns {TemplateSources}
 */
function sourcesOf(templates) {
  return Object.fromEntries(Object.entries(templates).flatMap(([name, source]) => (source === undefined ? [] : [[name, source]])));
}
