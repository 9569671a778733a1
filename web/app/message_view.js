/**
 * One message on screen: a user bubble, or an assistant reply with its thinking, streamed markdown,
 * tool cards, usage, status and actions (copy, regenerate, edit, ‹ 1/2 › branches; on a failed reply
 * "Open settings" or "Retry": actions.openSettings(), actions.retry(view)).
 *
 *   const view = new MessageView(msg, {images, actions})   msg: StoredMessage (or a live stub)
 *   view.el                                               an <li>
 *   live replies: view.onEvent(streamEvent)               text/reasoning/tool-call deltas, usage, error
 *                 view.card(callId)                       its ToolCard (approval, progress, result);
 *                 actions.decide(callId, "allow"|"always"|"deny", approvalEvent)   a button on a card
 *                 view.setState(state)                    waiting|streaming|done|interrupted|error
 *   stored replies: view.attachResults(toolResultsMsg)    fill the cards from the next message
 *
 * Model output is untrusted: it reaches the DOM only through StreamRenderer (sanitized per update).
 * The user's own text is set as text.
 */

import { StreamRenderer } from "../render/markdown.js";
import { ReplyReducer } from "../store/reduce.js";
import { fileResource } from "../sandbox/tool.js";
import { h } from "./dom.js";
import { errorNotice } from "./error_notice.js";
import { language, t } from "./i18n.js";
import { ToolCard } from "./tool_card.js";
import { textOf } from "./tree.js";
import { vendorLabel } from "./vendors.js";

export class MessageView {
  constructor(msg, { images, actions = {}, siblings = null, live = false } = {}) {
    this.msg = msg;
    this.images = images;
    this.actions = actions;
    this.cards = new Map(); // call id -> ToolCard
    this.cardsByIndex = new Map(); // stream index -> ToolCard (before the call id is final)
    this.reply = new ReplyReducer(); // a live reply's parts so far
    this.textShown = false;
    this.el = h("li", { className: `msg ${msg.role}`, dataset: { id: msg.id ?? "" } });
    this.el.dataset.state = stateOf(msg);
    if (msg.role === "user") this.#buildUser(msg);
    else this.#buildAssistant(msg, live);
    if (siblings && siblings.count > 1) this.el.append(this.#branchNav(siblings));
  }

  #buildUser(msg) {
    this.body = h("div", { className: "content" }, textOf(msg));
    const images = msg.parts.filter((p) => p.type === "image");
    const thumbs = images.map((p) => h("img", { className: "thumb", alt: "", src: `data:${p.mime_type};base64,${p.data}` }));
    const files = msg.parts.filter((p) => p.type === "document").map((p) =>
      h("li", { className: "file", title: p.text === undefined ? t("chat.pdfTextOnly") : p.mime_type }, `📄 ${p.name}`));
    this.el.append(this.body);
    if (thumbs.length) this.el.append(h("div", { className: "thumbs" }, thumbs));
    if (files.length) this.el.append(h("ul", { className: "files", "aria-label": t("chat.attachedFiles") }, files));
    if (this.actions.edit) {
      this.el.append(h("div", { className: "actions" },
        h("button", { type: "button", className: "edit", onclick: () => this.actions.edit(this) }, t("chat.edit"))));
    }
  }

  #buildAssistant(msg, live) {
    this.meta = h("div", { className: "meta" });
    this.reasoningText = h("div", { className: "reasoning-text" });
    this.reasoning = h("details", { className: "reasoning", hidden: true },
      h("summary", {}, t("chat.thinking")), this.reasoningText);
    this.body = h("div", { className: "content markdown" });
    this.toolsEl = h("div", { className: "tool-cards" });
    this.notice = h("div", { className: "notice", hidden: true });
    this.usageEl = h("div", { className: "usage" });
    this.el.append(this.meta, this.reasoning, this.body, this.toolsEl, this.notice, this.usageEl);
    this.renderer = new StreamRenderer(this.body, {
      images: this.images,
      labels: { copy: t("chat.copy"), copied: t("chat.copied"), loadImage: () => t("chat.loadImage"),
                alwaysLoadImages: (host) => t("chat.alwaysLoadImages", { host }),
                tooLongToFormat: (length, limit) => t("chat.tooLongToFormat", { length: count(length), limit: count(limit) }),
                couldNotFormat: t("chat.couldNotFormat") },
    });
    this.#setMeta(msg);
    if (!live) this.#fillStored(msg);
    this.#addActions();
  }

  #setMeta(msg) {
    const who = [msg.vendor ? vendorLabel(msg.vendor) : null, msg.model].filter(Boolean).join(" · ");
    this.meta.textContent = who;
  }

  #fillStored(msg) {
    msg.parts.forEach((part, index) => {
      const text = part.type === "tool_call" ? undefined : part.text;
      this.#showPart({ part, index, added: true, delta: text, done: true });
    });
    this.renderer.finish();
    this.setUsage(msg.usage);
    if (msg.status === "interrupted") this.#showNotice(t("chat.interrupted"));
    if (msg.error) this.showError(msg.error);
  }

  /** Draw one change of a part (store/reduce.js): the same path for a stored reply and a streamed one. */
  #showPart({ part, index, added, delta, done }) {
    switch (part.type) {
      case "text":
        if (added && this.textShown) this.renderer.append("\n\n");
        this.textShown = true;
        if (delta) this.renderer.append(delta);
        break;
      case "reasoning":
        if (delta) this.#reasoning(delta);
        break;
      case "tool_call": {
        const card = this.cardsByIndex.get(index) ?? this.#newCard(part.name, part.id, index);
        if (done) {
          // text that was not a JSON object: the core's raw_arguments, or what a reply cut by a reload had (reduce.js)
          card.setArguments(part.arguments, part.raw_arguments ?? part.provider_details?.partial_arguments ?? undefined);
          card.callId = part.id;
          this.cards.set(part.id, card);
        } else if (delta) card.argsDelta(delta);
        break;
      }
      default:
        break; // images and tool results are not parts of a streamed reply
    }
  }

  #addActions() {
    const bar = h("div", { className: "actions" });
    bar.append(h("button", { type: "button", className: "copy", onclick: () => this.#copy() }, t("chat.copy")));
    if (this.actions.regenerate) {
      bar.append(h("button", { type: "button", className: "regenerate", onclick: () => this.actions.regenerate(this) },
        t("chat.regenerate")));
    }
    this.el.append(bar);
  }

  #branchNav({ index, count }) {
    return h("nav", { className: "branches", "aria-label": t("chat.branch", { index, count }) },
      h("button", { type: "button", "aria-label": t("chat.prevBranch"), disabled: index <= 1,
                    onclick: () => this.actions.branch?.(this, -1) }, "‹"),
      h("span", { className: "branch-pos" }, t("chat.branch", { index, count })),
      h("button", { type: "button", "aria-label": t("chat.nextBranch"), disabled: index >= count,
                    onclick: () => this.actions.branch?.(this, +1) }, "›"));
  }

  async #copy() {
    try {
      await navigator.clipboard.writeText(textOf(this.msg) || this.renderer?.text || "");
    } catch {
      /* clipboard refused (no focus / permission): nothing to undo */
    }
  }

  #reasoning(text) {
    this.reasoning.hidden = false;
    this.reasoningText.textContent += text;
  }

  #newCard(name, callId, index) {
    const card = new ToolCard({ name, callId, images: this.images,
                                onDecision: (decision, ask) => this.actions.decide?.(card.callId, decision, ask) });
    if (callId) this.cards.set(callId, card);
    if (index !== undefined) this.cardsByIndex.set(index, card);
    this.toolsEl.append(card.el);
    return card;
  }

  #showNotice(text, isError = false) {
    this.notice.hidden = false;
    this.notice.classList.toggle("error", isError);
    this.notice.textContent = text;
  }

  setState(state) {
    this.el.dataset.state = state;
    if (state === "interrupted") this.#showNotice(t("chat.interrupted"));
  }

  setUsage(usage) {
    if (!usage || (usage.input_tokens == null && usage.output_tokens == null)) return;
    this.usageEl.textContent = t("chat.usage", { input: usage.input_tokens ?? "?", output: usage.output_tokens ?? "?" });
  }

  /** A failed reply: what went wrong and what to do (web/app/error_notice.js). `error`: pycore's ErrorInfo. */
  showError(error) {
    const info = typeof error === "string" ? { message: error } : { ...error };
    if (this.msg.vendor) info.vendor = this.msg.vendor; // the profile's ("OpenAI-compatible"), not the adapter's
    this.notice.hidden = false;
    this.notice.classList.add("error");
    this.notice.replaceChildren(errorNotice(info, {
      openSettings: this.actions.openSettings,
      retry: this.actions.retry ? () => this.actions.retry(this) : null,
    }));
  }

  card(callId) {
    return this.cards.get(callId);
  }

  /** One streamed event of this reply's step (docs/PROTOCOL.md), folded into parts by store/reduce.js. */
  onEvent(ev) {
    const change = this.reply.apply(ev);
    if (change?.part) this.#showPart(change);
    else if (change?.usage) this.setUsage(change.usage);
    else if (change && "error" in change) this.showError(change.error ?? { message: "error" });
  }

  finishStream() {
    this.renderer.finish();
  }

  /** Fill this reply's tool cards from the message that carries their results. */
  attachResults(resultsMsg, meta = {}) {
    for (const part of resultsMsg.parts) {
      if (part.type !== "tool_result") continue;
      const card = this.cards.get(part.call_id) ?? this.#newCard(part.name ?? "tool", part.call_id);
      if (meta[part.call_id]?.denied) card.setStatus("denied"); // the user said no (kept by chat.js)
      // Files a tool wrote (the code interpreter's downloads) are kept beside the result: offered again.
      const kept = meta[part.call_id] ?? {};
      const files = (kept.files ?? []).map(fileResource);
      card.setResult([...toMcpContent(part.content), ...files, ...(kept.links ?? [])],
                     { isError: part.is_error, durationMs: kept.duration_ms, structured: kept.structured,
                       schemaProblem: kept.schema_problem, openResource: this.actions.openResource?.(kept.source) ?? null });
      card.showAsked(kept.asked ?? []);
      if (kept.app && !card.view) this.actions.showApp?.(card, kept.app);
    }
  }

  destroy() {
    this.renderer?.destroy();
    for (const card of this.cards.values()) card.destroy();
  }
}

const count = (n) => n.toLocaleString(language());

function stateOf(msg) {
  if (msg.status === "interrupted") return "interrupted";
  if (msg.status === "error") return "error";
  if (msg.status === "streaming") return "streaming";
  return "done";
}

/** pycore result parts ({type: image, data, mime_type}) -> MCP content items ({mimeType}). */
export function toMcpContent(items) {
  return (items ?? []).map((item) => (item.type === "image" ? { type: "image", data: item.data, mimeType: item.mime_type } : item));
}
