/**
 * An MCP server's question to the user (elicitation: pycore/mcp/elicitation.py), drawn in the card of the
 * server's running tool. A form: each field of the requested schema as a labelled control (text, email, URL,
 * date, number, a switch, a choice, several choices), its default filled in, the browser's checks on it, and
 * Accept / Decline / Cancel. A URL: the server's message, the host the link goes to (as the browser parses the
 * URL, which must agree with the core's reading, or the link is declined and never offered), the whole link, and
 * "Open <host>", which opens it in a new tab only when pressed (that press is the consent), Decline, Cancel.
 *
 *   const question = new Question(event, {asker, answer: async ({action, content?}) => ...})
 *        event: the `elicitation` event (docs/PROTOCOL.md); asker: who asks, as the page names the server.
 *        answer: sends the reply; when it throws (the core found a field that does not fit), the message is
 *        shown and the form stays open to correct.
 *   question.el;  question.focus();  question.close()   the run ended: a question still open is cancelled
 *
 * All the server wrote (message, labels, descriptions, choices, the URL) goes in as text.
 */

import { h } from "./dom.js";
import { messageOf } from "./error_notice.js";
import { t } from "./i18n.js";

/**
 * @typedef {import("../types/contract").ElicitationEvent} ElicitationEvent
 * @typedef {Omit<import("../types/contract").ElicitationAnswerParams, "id">} ElicitationReply
 * @typedef {{type?: string, title?: string, description?: string, default?: unknown, format?: string,
 *   minimum?: number, maximum?: number, minLength?: number, maxLength?: number, items?: FieldSpec,
 *   enum?: unknown[], enumNames?: unknown[], oneOf?: unknown[], anyOf?: unknown[]}} FieldSpec
 *   one property of a requested schema (MCP's flat schemas: strings, numbers, booleans, enums, multi-select)
 * @typedef {{properties?: Record<string, FieldSpec>, required?: string[]}} FormSchema
 * @typedef {{el: HTMLElement, value: () => [string, unknown][]}} Field
 */

/** @type {Record<string, string | undefined>} */
const FORMATS = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };
let nextId = 1;

export class Question {
  /**
   * @param {ElicitationEvent} event
   * @param {{asker: string, answer: (reply: ElicitationReply) => Promise<unknown>}} parts
   */
  constructor(event, { asker, answer }) {
    this.event = event;
    this.answer = answer;
    this.done = false;
    /** @type {Field[]} */
    this.fields = [];
    this.status = h("p", { className: "question-status", role: "status", "aria-live": "polite" });
    const title = t("question.title", { server: asker });
    this.el = h("section", { className: "question", role: "group", "aria-label": title },
      h("h4", {}, title), h("p", { className: "question-message" }, event.message));
    if (event.mode === "url") this.#link(event);
    else this.#form(/** @type {FormSchema} */ (event.requested_schema ?? {}));
    this.el.append(this.status);
  }

  focus() {
    this.#controls()[0]?.focus({ preventScroll: true });
  }

  close() {
    if (!this.done) this.#ended(t("question.closed"));
  }

  /** @returns {(HTMLInputElement | HTMLSelectElement | HTMLButtonElement)[]} */
  #controls() {
    return [...this.el.querySelectorAll("input, select, button")].filter((el) => el instanceof HTMLInputElement
      || el instanceof HTMLSelectElement || el instanceof HTMLButtonElement);
  }

  /** @param {FormSchema} schema */
  #form(schema) {
    const required = new Set(schema.required ?? []);
    this.fields = Object.entries(schema.properties ?? {}).map(([name, spec]) => field(name, spec, required.has(name)));
    const form = h("form", { className: "question-form", novalidate: false },
      ...this.fields.map((f) => f.el),
      h("div", { className: "question-actions" },
        h("button", { type: "submit", className: "primary" }, t("question.accept")),
        h("button", { type: "button", onclick: () => this.#send({ action: "decline" }) }, t("question.decline")),
        h("button", { type: "button", onclick: () => this.#send({ action: "cancel" }) }, t("question.cancel"))));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      if (!form.reportValidity()) return;
      this.#send({ action: "accept", content: Object.fromEntries(this.fields.flatMap((f) => f.value())) });
    });
    this.el.append(form);
  }

  /** @param {ElicitationEvent} event */
  #link({ url, url_host: coreHost }) {
    const host = browserHost(url);
    if (!host || host !== coreHost) { // the core and the browser read the host differently: never offered
      this.el.append(h("p", { className: "question-host error" }, t("question.refusedLink", { url: url ?? "" })));
      queueMicrotask(() => this.#send({ action: "decline" }));
      return;
    }
    this.el.append(
      h("p", { className: "question-host" }, t("question.opens"), " ", h("strong", {}, host ?? "")),
      h("p", {}, h("code", { className: "question-url" }, url ?? "")),
      h("div", { className: "question-actions" },
        h("button", { type: "button", className: "primary", onclick: () => {
          window.open(url ?? undefined, "_blank", "noopener,noreferrer"); // only now, on the user's press
          this.#send({ action: "accept" });
        } }, t("question.open", { host: host ?? "" })),
        h("button", { type: "button", onclick: () => this.#send({ action: "decline" }) }, t("question.decline")),
        h("button", { type: "button", onclick: () => this.#send({ action: "cancel" }) }, t("question.cancel"))));
  }

  /** @param {ElicitationReply} reply */
  async #send(reply) {
    if (this.done) return;
    this.status.classList.remove("error");
    try {
      await this.answer(reply);
      this.#ended(t(`question.done.${reply.action}`));
    } catch (err) {
      this.status.textContent = t("question.failed", { message: messageOf(err) });
      this.status.classList.add("error");
    }
  }

  /** @param {string} text */
  #ended(text) {
    this.done = true;
    for (const control of this.#controls()) control.disabled = true;
    this.status.classList.remove("error");
    this.status.textContent = text;
    this.el.dataset.answered = "true";
  }
}

/**
 * The host the browser goes to for `url` (WHATWG parsing), or null when it is not an absolute http(s) URL.
 * @param {string | null | undefined} url
 */
function browserHost(url) {
  try {
    const parsed = new URL(String(url));
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.hostname : null;
  } catch {
    return null;
  }
}

/**
 * One field of the form: its element, and value() -> [[name, value]] (none when left empty and optional).
 * @param {string} name
 * @param {FieldSpec} spec
 * @param {boolean} required
 * @returns {Field}
 */
function field(name, spec, required) {
  const id = `question-field-${nextId++}`;
  const label = h("label", { for: id }, spec.title ?? name, required ? " *" : "");
  const hint = spec.description ? h("p", { className: "hint", id: `${id}-hint` }, spec.description) : null;
  /** @type {Record<string, string>} */
  const described = hint ? { "aria-describedby": `${id}-hint` } : {};
  const choices = choicesOf(spec.type === "array" ? spec.items ?? {} : spec);
  if (spec.type === "array") return checkboxes(name, spec, choices, hint, described);
  if (choices.length) {
    const control = h("select", { id, required, ...described },
      required && spec.default === undefined ? h("option", { value: "" }, "") : null,
      ...choices.map((c, i) => h("option", { value: String(i) }, c.title)));
    const chosen = choices.findIndex((c) => c.value === spec.default);
    if (chosen >= 0) control.value = String(chosen);
    /** @type {Field["value"]} */
    const value = () => (control.value === "" ? [] : [[name, choices[Number(control.value)].value]]);
    return { el: h("div", { className: "question-field" }, label, control, hint), value };
  }
  if (spec.type === "boolean") {
    const control = h("input", { id, type: "checkbox", ...described });
    control.checked = spec.default === true;
    return { el: h("div", { className: "question-field checkbox-row" }, control, label, hint),
             value: () => [[name, control.checked]] };
  }
  const number = spec.type === "number" || spec.type === "integer";
  const control = number
    ? h("input", { id, type: "number", required, step: spec.type === "integer" ? "1" : "any",
                   min: spec.minimum, max: spec.maximum, ...described })
    : h("input", { id, type: FORMATS[spec.format ?? ""] ?? "text", required, minlength: spec.minLength,
                   maxlength: spec.maxLength, ...described });
  if (spec.default !== undefined) control.value = String(spec.default);
  /** @type {Field["value"]} */
  const value = number ? () => (control.value === "" ? [] : [[name, Number(control.value)]])
    : () => (control.value === "" && !required ? [] : [[name, control.value]]);
  return { el: h("div", { className: "question-field" }, label, control, hint), value };
}

/**
 * A multi-select: one checkbox a choice.
 * @param {string} name
 * @param {FieldSpec} spec
 * @param {{value: unknown, title: string}[]} choices
 * @param {HTMLElement | null} hint
 * @param {Record<string, string>} described
 * @returns {Field}
 */
function checkboxes(name, spec, choices, hint, described) {
  const boxes = choices.map((c) => h("input", { type: "checkbox", value: String(c.value) }));
  const chosen = Array.isArray(spec.default) ? spec.default : [];
  boxes.forEach((box, i) => (box.checked = chosen.includes(choices[i].value)));
  const el = h("fieldset", { className: "question-field", ...described },
    h("legend", {}, spec.title ?? name), hint,
    ...boxes.map((box, i) => h("label", { className: "checkbox-row" }, box, choices[i].title)));
  return { el, value: () => [[name, choices.filter((_, i) => boxes[i].checked).map((c) => c.value)]] };
}

/**
 * The values a choice allows, with what to show for each: enum (+ enumNames), or oneOf/anyOf of {const, title}.
 * @param {FieldSpec} spec
 * @returns {{value: unknown, title: string}[]}
 */
function choicesOf(spec) {
  if (Array.isArray(spec.enum)) return spec.enum.map((v, i) => ({ value: v, title: String(spec.enumNames?.[i] ?? v) }));
  const options = spec.oneOf ?? spec.anyOf;
  if (Array.isArray(options) && options.every(isConst)) {
    return options.map((o) => ({ value: o.const, title: String(o.title ?? o.const) }));
  }
  return [];
}

/**
 * @param {unknown} option
 * @returns {option is {const: unknown, title?: unknown}}
 */
function isConst(option) {
  return typeof option === "object" && option !== null && "const" in option;
}
