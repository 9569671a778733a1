/**
 * An MCP server asks the conversation's model for a completion (sampling: pycore/mcp/sampling.py), drawn in the
 * card of the server's running tool, in two stages. First the request: who asks, which model answers and how
 * many tokens it may write (the smaller of the server's wish and the user's budget), how much it sends (characters
 * of text, images and their size), the server's preferred models (a hint, not followed), its system prompt and
 * messages — editable — with each image it sends as a thumbnail (kept when the text is edited), and "Run it" /
 * "Deny". A request the core refused without asking (too much text, too many open) is a note: refusalNote(). Then the
 * answer: the model's text, and "Send to <server>" / "Deny". Nothing goes to the model or back to the server
 * without the press.
 *
 *   const sampling = new SamplingRequest(event, {asker, answer: async ({action, messages?, system_prompt?}) => ...})
 *   sampling.showResult(resultEvent);  sampling.el;  sampling.focus();  sampling.close()   the run ended
 *
 * All the server and the model wrote goes in as text.
 */

import { formatBytes } from "../render/media_bytes.js";
import { h } from "./dom.js";
import { messageOf } from "./error_notice.js";
import { language, t } from "./i18n.js";

/**
 * @typedef {import("../types/contract").SamplingEvent} SamplingEvent
 * @typedef {{mime_type: string, bytes: number, data: string}} SamplingImage
 * @typedef {{role: string, text: string, images?: SamplingImage[]}} SamplingMessage   an event's message, as
 *   pycore.mcp.sampling shows it
 * @typedef {Omit<import("../types/contract").SamplingAnswerParams, "id">} SamplingReply
 */

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]); // pycore.mcp.sampling's
/** @param {number} n */
const count = (n) => new Intl.NumberFormat(language()).format(n);

/** @param {SamplingEvent} event */
const messagesOf = (event) => /** @type {SamplingMessage[]} */ (event.messages ?? []);

/**
 * What the request sends, in numbers: its characters of text, and its images with their total size.
 * @param {SamplingEvent} event
 */
function sizeLine(event) {
  const images = messagesOf(event).flatMap((m) => m.images ?? []);
  const chars = count(event.input_chars ?? 0);
  if (!images.length) return t("sampling.size", { chars });
  const bytes = formatBytes(images.reduce((sum, image) => sum + image.bytes, 0));
  return t("sampling.sizeImages", { chars, images: images.length, bytes });
}

/**
 * An image the request would send, drawn from its own bytes (a raster type only), named by type and size.
 * @param {SamplingImage} image
 * @param {number} i
 * @param {string} message
 */
function thumbnail(image, i, message) {
  const alt = t("sampling.image", { n: i + 1, message, type: image.mime_type, size: formatBytes(image.bytes) });
  if (!IMAGE_TYPES.has(image.mime_type)) return h("span", { className: "sampling-image hint" }, alt);
  return h("img", { className: "sampling-image", alt, title: alt, src: `data:${image.mime_type};base64,${image.data}` });
}

/**
 * A request refused without asking the user, said in the card: too much text for the user's limit, or (one note
 * per server and run, counting) more requests open at once than a server may have.
 */
/**
 * @param {SamplingEvent} event
 * @param {string} asker
 * @param {HTMLElement | null} [note]
 */
export function refusalNote(event, asker, note = null) {
  if (event.refused === "too_many") {
    const el = note ?? h("p", { className: "sampling-refused question-status error", role: "status", "data-count": "0" });
    el.dataset.count = String(Number(el.dataset.count) + 1);
    el.textContent = t("sampling.refusedMany", { count: el.dataset.count, server: asker, limit: event.limit });
    return el;
  }
  return h("p", { className: "sampling-refused question-status error", role: "status" },
    t("sampling.refusedLarge", { server: asker, chars: count(event.input_chars ?? 0), limit: count(event.limit ?? 0) }));
}

export class SamplingRequest {
  /**
   * @param {SamplingEvent} event
   * @param {{asker: string, answer: (reply: SamplingReply) => Promise<unknown>}} parts
   */
  constructor(event, { asker, answer }) {
    this.event = event;
    this.asker = asker;
    this.answer = answer;
    this.done = false;
    /** @type {string | undefined} */
    this.resultText = undefined;
    this.status = h("p", { className: "question-status", role: "status", "aria-live": "polite" });
    const title = t("sampling.title", { server: asker });
    this.system = event.system_prompt !== undefined
      ? h("textarea", { rows: 2, "aria-label": t("sampling.system") }) : null;
    if (this.system) this.system.value = event.system_prompt ?? "";
    this.messages = messagesOf(event).map((m) => {
      const label = t("sampling.message", { role: t(`sampling.role.${m.role}`) });
      const box = h("textarea", { rows: 3, "aria-label": label });
      box.value = m.text;
      return { role: m.role, box, images: (m.images ?? []).map((image, i) => thumbnail(image, i, label)) };
    });
    this.actions = h("div", { className: "question-actions" },
      h("button", { type: "button", className: "primary", onclick: () => this.#approve() }, t("sampling.run")),
      h("button", { type: "button", onclick: () => this.#send({ action: "deny" }, "denied") }, t("sampling.deny")));
    this.el = h("section", { className: "question sampling", role: "group", "aria-label": title },
      h("h4", {}, title),
      h("p", { className: "sampling-model" }, t("sampling.model", { model: event.model, tokens: event.max_tokens })),
      h("p", { className: "sampling-size" }, sizeLine(event)),
      event.model_hints?.length ? h("p", { className: "hint" }, t("sampling.hints", { models: event.model_hints.join(", ") })) : null,
      this.system ? h("label", { className: "sampling-field" }, t("sampling.system"), this.system) : null,
      ...this.messages.map(({ role, box, images }) => h("div", { className: "sampling-field" },
        h("label", {}, t(`sampling.role.${role}`), box),
        images.length ? h("div", { className: "sampling-images" }, images) : null)),
      this.actions, this.status);
  }

  focus() {
    this.actions.querySelector("button")?.focus({ preventScroll: true });
  }

  close() {
    if (!this.done) this.#ended(t("question.closed"));
  }

  /** The model answered: shown, with Send / Deny. */
  /** @param {SamplingEvent} event */
  showResult(event) {
    if (this.done) return;
    this.resultText = event.text ?? "";
    for (const box of this.el.querySelectorAll("textarea")) box.readOnly = true;
    this.status.textContent = "";
    const text = h("p", { className: "sampling-answer" }, event.text ?? "");
    this.actions.replaceChildren(
      h("button", { type: "button", className: "primary", onclick: () => this.#send({ action: "send" }, "sent") },
        t("sampling.send", { server: this.asker })),
      h("button", { type: "button", onclick: () => this.#send({ action: "deny" }, "denied") }, t("sampling.deny")));
    this.actions.before(h("div", { className: "sampling-result", role: "group", "aria-label": t("sampling.answer") },
      h("h5", {}, t("sampling.answer")), text));
    this.actions.querySelector("button")?.focus({ preventScroll: true });
  }

  #approve() {
    /** @type {SamplingReply} */
    const reply = { action: "approve" };
    const sent = messagesOf(this.event);
    const edited = this.messages.some(({ box }, i) => box.value !== sent[i].text);
    if (edited) reply.messages = this.messages.map(({ role, box }) => ({ role, text: box.value }));
    if (this.system && this.system.value !== this.event.system_prompt) reply.system_prompt = this.system.value;
    this.#send(reply, null);
  }

  /**
   * @param {SamplingReply} reply
   * @param {string | null} ending
   */
  async #send(reply, ending) {
    if (this.done) return;
    for (const button of this.actions.querySelectorAll("button")) button.disabled = true;
    try {
      await this.answer(reply);
      if (ending) this.#ended(t(`sampling.${ending}`));
      else this.status.textContent = t("sampling.running");
    } catch (err) {
      for (const button of this.actions.querySelectorAll("button")) button.disabled = false;
      this.status.textContent = t("question.failed", { message: messageOf(err) });
      this.status.classList.add("error");
    }
  }

  /** @param {string} text */
  #ended(text) {
    this.done = true;
    for (const control of this.el.querySelectorAll("textarea, button")) {
      if (control instanceof HTMLTextAreaElement || control instanceof HTMLButtonElement) control.disabled = true;
    }
    this.status.classList.remove("error");
    this.status.textContent = text;
    this.el.dataset.answered = "true";
  }
}
