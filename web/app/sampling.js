/**
 * An MCP server asks the conversation's model for a completion (sampling: pycore/mcp/sampling.py), drawn in the
 * card of the server's running tool, in two stages. First the request: who asks, which model answers and how
 * many tokens it may write (the smaller of the server's wish and the user's budget), the server's preferred
 * models (a hint, not followed), its system prompt and messages — editable — and "Run it" / "Deny". Then the
 * answer: the model's text, and "Send to <server>" / "Deny". Nothing goes to the model or back to the server
 * without the press.
 *
 *   const sampling = new SamplingRequest(event, {asker, answer: async ({action, messages?, system_prompt?}) => ...})
 *   sampling.showResult(resultEvent);  sampling.el;  sampling.focus();  sampling.close()   the run ended
 *
 * All the server and the model wrote goes in as text.
 */

import { h } from "./dom.js";
import { t } from "./i18n.js";

export class SamplingRequest {
  constructor(event, { asker, answer }) {
    this.event = event;
    this.asker = asker;
    this.answer = answer;
    this.done = false;
    this.status = h("p", { className: "question-status", role: "status", "aria-live": "polite" });
    const title = t("sampling.title", { server: asker });
    this.system = event.system_prompt !== undefined
      ? h("textarea", { rows: 2, "aria-label": t("sampling.system") }) : null;
    if (this.system) this.system.value = event.system_prompt;
    this.messages = (event.messages ?? []).map((m) => {
      const box = h("textarea", { rows: 3, "aria-label": t("sampling.message", { role: t(`sampling.role.${m.role}`) }) });
      box.value = m.text;
      return { role: m.role, box };
    });
    this.actions = h("div", { className: "question-actions" },
      h("button", { type: "button", className: "primary", onclick: () => this.#approve() }, t("sampling.run")),
      h("button", { type: "button", onclick: () => this.#send({ action: "deny" }, "denied") }, t("sampling.deny")));
    this.el = h("section", { className: "question sampling", role: "group", "aria-label": title },
      h("h4", {}, title),
      h("p", { className: "sampling-model" }, t("sampling.model", { model: event.model, tokens: event.max_tokens })),
      event.model_hints?.length ? h("p", { className: "hint" }, t("sampling.hints", { models: event.model_hints.join(", ") })) : null,
      this.system ? h("label", { className: "sampling-field" }, t("sampling.system"), this.system) : null,
      ...this.messages.map(({ role, box }) => h("label", { className: "sampling-field" }, t(`sampling.role.${role}`), box)),
      this.actions, this.status);
  }

  focus() {
    this.actions.querySelector("button")?.focus({ preventScroll: true });
  }

  close() {
    if (!this.done) this.#ended(t("question.closed"));
  }

  /** The model answered: shown, with Send / Deny. */
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
    this.actions.querySelector("button").focus({ preventScroll: true });
  }

  #approve() {
    const reply = { action: "approve" };
    const edited = this.messages.some(({ box }, i) => box.value !== this.event.messages[i].text);
    if (edited) reply.messages = this.messages.map(({ role, box }) => ({ role, text: box.value }));
    if (this.system && this.system.value !== this.event.system_prompt) reply.system_prompt = this.system.value;
    this.#send(reply, null);
  }

  async #send(reply, ending) {
    if (this.done) return;
    for (const button of this.actions.querySelectorAll("button")) button.disabled = true;
    try {
      await this.answer(reply);
      if (ending) this.#ended(t(`sampling.${ending}`));
      else this.status.textContent = t("sampling.running");
    } catch (err) {
      for (const button of this.actions.querySelectorAll("button")) button.disabled = false;
      this.status.textContent = t("question.failed", { message: err.message });
      this.status.classList.add("error");
    }
  }

  #ended(text) {
    this.done = true;
    for (const control of this.el.querySelectorAll("textarea, button")) control.disabled = true;
    this.status.classList.remove("error");
    this.status.textContent = text;
    this.el.dataset.answered = "true";
  }
}
