/**
 * The assistant a chat runs as, and the chat's own changes to it, above the message box.
 *
 *   const cs = new ChatSettings({store, element, notify, vendor: () => "openai" | null})
 *   await cs.load()                      the assistants; the last one picked starts new chats
 *   await cs.showFor(conversation|null)  the chat's assistant and overrides (a new chat: the picked assistant)
 *   await cs.created(conversationId)     a new chat got its id: its assistant and overrides are stored with it
 *   cs.effective()                       the next turn's settings (store/assistants.js effectiveSettings)
 *
 * "Assistant" picks the preset; "Chat settings" opens the fields ("System prompt", "Temperature", "Max
 * output tokens", "Reasoning effort" or "Thinking budget" as the vendor takes it, "Code interpreter" with
 * "Reset notebook" for this chat's variables, and "Tools" (directly, through code, or both: code mode,
 * web/sandbox/code_mode.js)). A field changed there
 * changes this chat only; "Save to assistant" writes the fields into the assistant, "Save as new
 * assistant" makes one, "Reset" drops this chat's changes. Assistants export and import as JSON: an import shows
 * each assistant the file holds (system prompt, tools, interpreter, limits) before anything is added, and adds them
 * all as new ones (a name or id already here comes in as a copy, "… (imported)"; nothing is replaced).
 */

import { BUILTIN_ASSISTANTS, EFFORTS, effectiveSettings, TOOL_MODES } from "../store/assistants.js";
import { PREFS, prefs } from "../store/prefs.js";
import { download, find, h } from "./dom.js";
import { messageOf } from "./error_notice.js";
import { onLanguageChange, t } from "./i18n.js";
import { vendorInfo } from "./vendors.js";

/**
 * @typedef {import("../store/assistants.js").Assistants} AssistantsApi
 * @typedef {Awaited<ReturnType<AssistantsApi["list"]>>[number]} Assistant
 * @typedef {Awaited<ReturnType<AssistantsApi["readImport"]>>[number]} ImportPlanned   one assistant a file would add
 * @typedef {Record<string, unknown>} Overrides   a chat's own changes to its assistant's fields
 */

const FIELDS = ["system", "temperature", "max_tokens", "reasoning", "interpreter", "artifacts", "tool_mode"];
const SHIPPED_NAMES = new Map(BUILTIN_ASSISTANTS.map((a) => [a.id, a.name]));

/**
 * An assistant's name for the reader: a built-in's in the page's language (assistant.builtin.<id after
 * "builtin:">) while it has the name it shipped with; the name the user gave it otherwise. Stored names and
 * ids are never translated, so exports and chats refer to the same assistant in any language.
 */
/** @param {{id: string, name: string} | null | undefined} assistant */
export function assistantName(assistant) {
  if (!assistant) return "";
  const builtin = SHIPPED_NAMES.get(assistant.id) === assistant.name;
  return builtin ? t(`assistant.builtin.${assistant.id.slice("builtin:".length)}`) : assistant.name;
}

export class ChatSettings {
  /**
   * @param {{store: import("../store/transcripts.js").Store, element: HTMLElement,
   *   notify: import("./notify.js").Notify, vendor?: () => string | null,
   *   resetNotebook?: ((conversationId: string) => Promise<unknown>) | null}} parts
   */
  constructor({ store, element, notify, vendor = () => null, resetNotebook = null }) {
    onLanguageChange(() => this.render());
    this.store = store;
    this.element = element;
    this.notify = notify;
    this.vendor = vendor;
    this.resetNotebook = resetNotebook;
    /** @type {Assistant[]} */
    this.assistants = [];
    this.assistantId = prefs.get(PREFS.assistant) ?? "builtin:general";
    /** @type {Overrides} */
    this.overrides = {};
    /** @type {string | null} */
    this.conversationId = null;
    this.picker = h("select", { id: "assistant-picker", onchange: () => this.#pick(this.picker.value) });
    this.toggle = h("button", { type: "button", className: "chat-settings-toggle", "aria-expanded": "false",
                                "aria-controls": "chat-settings", onclick: () => this.#open(Boolean(this.panel.hidden)) });
    this.panel = h("div", { id: "chat-settings", className: "chat-settings", role: "group", hidden: true });
    this.changed = h("span", { className: "chat-settings-changed hint", hidden: true });
    this.bar = h("div", { className: "chat-settings-bar" },
      h("label", { for: "assistant-picker", className: "assistant-label" }), this.picker, this.toggle, this.changed);
    element.replaceChildren(this.bar, this.panel);
    this.render();
  }

  async load() {
    this.assistants = await this.store.assistants.list();
    if (!this.assistants.some((a) => a.id === this.assistantId)) this.assistantId = this.assistants[0].id;
    this.render();
  }

  /** @param {{id: string, assistant_id?: string | null, overrides?: Overrides | null} | null} conversation */
  async showFor(conversation) {
    this.conversationId = conversation?.id ?? null;
    if (conversation) {
      this.assistantId = conversation.assistant_id ?? this.assistantId;
      this.overrides = { ...(conversation.overrides ?? {}) };
    } else {
      this.assistantId = prefs.get(PREFS.assistant) ?? this.assistantId;
      this.overrides = {};
    }
    if (this.assistants.length && !this.assistants.some((a) => a.id === this.assistantId)) {
      this.assistantId = this.assistants[0].id;
    }
    this.render();
  }

  /** @param {string} conversationId */
  async created(conversationId) {
    this.conversationId = conversationId;
    await this.#persist();
  }

  get assistant() {
    return this.assistants.find((a) => a.id === this.assistantId) ?? this.assistants[0] ?? null;
  }

  effective() {
    return effectiveSettings(this.assistant, this.overrides);
  }

  // ------------------------------------------------------------------ drawing

  render() {
    find(this.bar, ".assistant-label").textContent = t("assistant.label");
    this.picker.replaceChildren(...this.assistants.map((a) => h("option", { value: a.id }, assistantName(a))));
    this.picker.value = this.assistant?.id ?? "";
    this.toggle.textContent = t("assistant.chatSettings");
    const changed = Object.keys(this.overrides).length;
    this.changed.hidden = !changed;
    this.changed.textContent = t("assistant.changedHere");
    if (!this.panel.hidden) this.#fillPanel();
  }

  /** @param {boolean} open */
  #open(open) {
    this.panel.hidden = !open;
    this.toggle.setAttribute("aria-expanded", String(open));
    if (open) this.#fillPanel();
  }

  #fillPanel() {
    const s = this.effective();
    const info = vendorInfo(this.vendor() ?? "");
    /** @type {(id: string, label: string, control: HTMLElement, hint?: string | null) => HTMLElement} */
    const field = (id, label, control, hint = null) =>
      h("div", { className: "row" }, h("label", { for: id }, label), control, hint && h("p", { className: "hint" }, hint));
    /** @type {(key: string, read: (el: HTMLInputElement) => unknown) => (ev: Event) => void} */
    const onInput = (key, read) => (ev) => this.#override(key, read(/** @type {HTMLInputElement} */ (ev.target)));
    const system = h("textarea", { id: "cs-system", rows: 4, oninput: onInput("system", (el) => el.value) });
    system.value = s.system;
    const temperature = h("input", { id: "cs-temperature", type: "number", min: 0, max: 2, step: 0.1,
                                     placeholder: t("assistant.vendorDefault"),
                                     disabled: info && info.temperature === false,
                                     oninput: onInput("temperature", (el) => numberOrNull(el.value)) });
    temperature.value = String(s.temperature ?? "");
    const maxTokens = h("input", { id: "cs-max-tokens", type: "number", min: 1, step: 1,
                                   placeholder: t("assistant.vendorDefault"),
                                   oninput: onInput("max_tokens", (el) => numberOrNull(el.value)) });
    maxTokens.value = String(s.max_tokens ?? "");
    const rows = [
      field("cs-system", t("assistant.system"), system),
      field("cs-temperature", t("assistant.temperature"), temperature,
            info && info.temperature === false ? t("assistant.noTemperature", { vendor: info.label }) : null),
      field("cs-max-tokens", t("assistant.maxTokens"), maxTokens),
    ];
    if (info?.reasoning === "budget") {
      const budget = h("input", { id: "cs-reasoning", type: "number", min: 1024, step: 1024, placeholder: t("assistant.off"),
                                  oninput: onInput("reasoning", (el) => (el.value ? { budget_tokens: Number(el.value) } : null)) });
      budget.value = String(reasoningValue(s.reasoning, "budget_tokens") ?? "");
      rows.push(field("cs-reasoning", t("assistant.thinkingBudget"), budget));
    } else if (info?.reasoning === "effort") {
      const effort = h("select", { id: "cs-reasoning",
                                   onchange: onInput("reasoning", (el) => (el.value ? { effort: el.value } : null)) },
        h("option", { value: "" }, t("assistant.off")),
        ...EFFORTS.map((e) => h("option", { value: e }, t(`assistant.effort.${e}`))));
      effort.value = String(reasoningValue(s.reasoning, "effort") ?? "");
      rows.push(field("cs-reasoning", t("assistant.reasoningEffort"), effort));
    }
    const interpreter = h("input", { id: "cs-interpreter", type: "checkbox", checked: Boolean(s.interpreter),
                                     onchange: onInput("interpreter", (el) => el.checked) });
    rows.push(h("div", { className: "row checkbox-row" },
      h("label", { className: "check" }, interpreter, h("span", {}, t("assistant.interpreter"))), // side by side
      s.interpreter && this.resetNotebook && this.conversationId
        ? h("button", { type: "button", onclick: () => this.#resetNotebook() }, t("assistant.resetNotebook")) : null,
      h("p", { className: "hint" }, t("assistant.interpreterHint"))));
    const artifacts = h("input", { id: "cs-artifacts", type: "checkbox", checked: s.artifacts !== false,
                                   onchange: onInput("artifacts", (el) => el.checked) });
    rows.push(h("div", { className: "row checkbox-row" },
      h("label", { className: "check" }, artifacts, h("span", {}, t("assistant.artifacts"))),
      h("p", { className: "hint" }, t("assistant.artifactsHint"))));
    const toolMode = h("select", { id: "cs-tool-mode", onchange: onInput("tool_mode", (el) => el.value) },
      ...TOOL_MODES.map((mode) => h("option", { value: mode }, t(`assistant.toolMode.${mode}`))));
    toolMode.value = String(s.tool_mode ?? "direct");
    rows.push(field("cs-tool-mode", t("assistant.toolMode"), toolMode, t("assistant.toolModeHint")));
    const actions = h("div", { className: "inline actions" },
      h("button", { type: "button", onclick: () => this.#saveToAssistant() }, t("assistant.saveTo")),
      h("button", { type: "button", onclick: () => this.#askName(actions) }, t("assistant.saveAsNew")),
      h("button", { type: "button", onclick: () => this.#reset() }, t("assistant.reset")),
      h("button", { type: "button", onclick: () => this.#export() }, t("assistant.export")),
      h("button", { type: "button", onclick: () => this.#chooseImport() }, t("assistant.import")),
      this.assistant?.builtin ? null
        : h("button", { type: "button", className: "danger", onclick: () => this.#delete() }, t("assistant.delete")));
    this.panel.replaceChildren(...rows, actions);
  }

  // ------------------------------------------------------------------ changes

  /** @param {string} id */
  async #pick(id) {
    this.assistantId = id;
    prefs.set(PREFS.assistant, id); // new chats start from the assistant picked last
    this.overrides = {};
    await this.#persist();
    this.render();
  }

  /**
   * @param {string} key
   * @param {unknown} value
   */
  #override(key, value) {
    /** @type {Record<string, unknown> | null} */
    const assistant = this.assistant;
    if (JSON.stringify(value) === JSON.stringify(assistant?.[key] ?? null)) delete this.overrides[key];
    else this.overrides[key] = value;
    this.changed.hidden = !Object.keys(this.overrides).length;
    this.#persist().catch((err) => this.notify(messageOf(err), { error: true }));
  }

  async #persist() {
    if (!this.conversationId) return;
    await this.store.setChatSettings(this.conversationId, { assistant_id: this.assistantId, overrides: { ...this.overrides } });
  }

  async #saveToAssistant() {
    await this.#save({ ...this.assistant, ...this.#fields() });
  }

  /** "Save as new assistant": its name is asked in a field in place of the buttons (Enter saves, Esc leaves). */
  /** @param {HTMLElement} actions */
  #askName(actions) {
    const field = h("input", { type: "text", className: "assistant-name", required: true,
                               "aria-label": t("assistant.newName"), value: `${this.assistant?.name ?? ""} 2` });
    const form = h("form", { className: "inline actions" }, field,
      h("button", { type: "submit", className: "primary" }, t("assistant.create")),
      h("button", { type: "button", onclick: () => form.replaceWith(actions) }, t("chat.cancel")));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      form.replaceWith(actions);
      this.#saveAsNew(field.value.trim());
    });
    field.addEventListener("keydown", (ev) => {
      if (ev.key !== "Escape") return;
      ev.preventDefault();
      ev.stopPropagation(); // Esc leaves the field; it does not stop a reply
      form.replaceWith(actions);
    });
    actions.replaceWith(form);
    field.focus();
    field.select();
  }

  /** @param {string} name */
  async #saveAsNew(name) {
    const { id: _id, builtin: _b, ...rest } = this.assistant ?? {};
    await this.#save({ ...rest, ...this.#fields(), name });
  }

  /** @param {Record<string, unknown>} fields */
  async #save(fields) {
    try {
      const saved = await this.store.assistants.save(fields);
      this.assistants = await this.store.assistants.list();
      this.assistantId = saved.id;
      prefs.set(PREFS.assistant, saved.id);
      this.overrides = {};
      await this.#persist();
      this.render();
      this.notify(t("assistant.saved", { name: assistantName(saved) }));
    } catch (err) {
      this.notify(messageOf(err), { error: true });
    }
  }

  #fields() {
    /** @type {Record<string, unknown>} */
    const s = this.effective();
    return Object.fromEntries(FIELDS.map((key) => [key, s[key]]));
  }

  /** This chat's notebook starts again: the variables its code made are gone. */
  async #resetNotebook() {
    if (!this.resetNotebook || !this.conversationId) return; // (the button shows only with both)
    await this.resetNotebook(this.conversationId);
    this.notify(t("assistant.notebookReset"));
  }

  async #reset() {
    this.overrides = {};
    await this.#persist();
    this.render();
  }

  async #delete() {
    const doomed = this.assistant;
    if (!doomed || doomed.builtin || !window.confirm(t("assistant.confirmDelete", { name: doomed.name }))) return;
    await this.store.assistants.delete(doomed.id);
    this.assistants = await this.store.assistants.list();
    this.assistantId = this.assistants[0].id;
    prefs.set(PREFS.assistant, this.assistantId);
    await this.#persist();
    this.render();
  }

  async #export() {
    download(new Blob([await this.store.assistants.exportJSON()], { type: "application/json" }), "orizuru-assistants.json");
  }

  /** What the file would add, shown before anything is written: "Import" adds it all, "Cancel" nothing. */
  /** @param {ImportPlanned[]} plan */
  #preview(plan) {
    const dialog = h("dialog", { className: "import-preview", "aria-labelledby": "import-preview-title" });
    const add = async () => {
      dialog.close("added");
      try {
        const { imported, copies } = await this.store.assistants.addImported(plan);
        this.assistants = await this.store.assistants.list();
        this.render();
        this.notify(t(copies ? "assistant.importedCopies" : "assistant.imported", { count: imported, copies }));
      } catch (err) {
        this.notify(t("assistant.importFailed", { message: messageOf(err) }), { error: true, timeout: 0 });
      }
    };
    const adding = plan.filter((p) => !p.skip);
    const skipped = plan.length - adding.length;
    dialog.append(h("form", { className: "dialog-body", method: "dialog" },
      h("h2", { id: "import-preview-title" }, t("assistant.importTitle")),
      h("p", {}, t("assistant.importIntro", { count: adding.length })),
      skipped ? h("p", { className: "hint" }, t("assistant.importSkipped", { count: skipped })) : null,
      h("ul", { className: "import-list" }, adding.map(importedSummary)),
      h("div", { className: "dialog-actions" },
        h("button", { type: "button", className: "primary", disabled: !adding.length, onclick: add },
          t("assistant.importConfirm", { count: adding.length })),
        h("button", { type: "submit" }, t("chat.cancel")))));
    dialog.addEventListener("close", () => {
      if (dialog.returnValue !== "added") this.notify(t("assistant.importCancelled"));
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  }

  #chooseImport() {
    const input = h("input", { type: "file", accept: "application/json,.json", hidden: true });
    input.addEventListener("change", async () => {
      try {
        const file = input.files?.[0];
        if (file) this.#preview(await this.store.assistants.readImport(await file.text()));
      } catch (err) {
        this.notify(t("assistant.importFailed", { message: messageOf(err) }), { error: true, timeout: 0 });
      } finally {
        input.remove();
      }
    });
    document.body.append(input);
    input.click();
  }
}

/**
 * What an imported assistant would do, for the reader: its system prompt, tools, interpreter and limits.
 * @param {ImportPlanned} planned
 */
function importedSummary({ assistant: a, clash }) {
  const servers = a.tools.mcp === "all" ? t("assistant.importAllServers")
    : a.tools.mcp.length ? a.tools.mcp.join(", ") : t("assistant.importNone");
  /** @param {unknown} value */
  const onOff = (value) => t(value ? "assistant.importOn" : "assistant.importOff");
  /** @param {unknown} value */
  const limit = (value) => (value === null ? t("assistant.importDefault") : String(value));
  /** @type {(label: string, value: string | Node) => HTMLElement[]} */
  const row = (label, value) => [h("dt", {}, label), h("dd", {}, value)];
  return h("li", { className: "import-assistant" },
    h("h3", {}, a.name),
    clash ? h("p", { className: "hint" }, t("assistant.importCopy", { name: assistantName(clash) })) : null,
    h("dl", {},
      ...row(t("assistant.system"), a.system ? h("pre", { className: "import-system" }, a.system) : t("assistant.importNone")),
      ...row(t("assistant.importServers"), servers),
      ...row(t("assistant.importPython"), onOff(a.tools.python)),
      ...row(t("assistant.interpreter"), onOff(a.interpreter)),
      ...row(t("assistant.artifacts"), onOff(a.artifacts)),
      ...row(t("assistant.toolMode"), t(`assistant.toolMode.${a.tool_mode}`)),
      ...row(t("assistant.importSteps"), limit(a.limits.max_steps)),
      ...row(t("assistant.importBudget"), limit(a.limits.token_budget)),
      ...row(t("assistant.temperature"), limit(a.temperature)),
      ...row(t("assistant.maxTokens"), limit(a.max_tokens))));
}

/**
 * One field of an assistant's reasoning setting: the effort or the budget, whichever form it has.
 * @param {import("../store/assistants.js").AssistantReasoning} reasoning
 * @param {"effort" | "budget_tokens"} key
 * @returns {string | number | null}
 */
function reasoningValue(reasoning, key) {
  if (!reasoning) return null;
  if (key === "effort") return "effort" in reasoning ? reasoning.effort : null;
  return "budget_tokens" in reasoning ? reasoning.budget_tokens : null;
}

/** @param {string} value */
function numberOrNull(value) {
  return value === "" ? null : Number(value);
}
