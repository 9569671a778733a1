/**
 * One step of a reply, inside its MessageView: what the model wrote before handing its tool calls over (or its
 * final answer): thinking, streamed markdown and the step's tool cards. A reply of one turn holds as many steps
 * as the model took; the reply, not the step, has the header, usage, status and actions.
 *
 *   const step = new StepView({images, decide})   decide(callId, decision, approvalEvent): a card's buttons
 *   step.el                                        a <section>
 *   step.fill(storedMessage)                       a stored step's parts, drawn at once
 *   step.onEvent(streamEvent) -> change            a live step's event folded by store/reduce.js, drawn as it comes
 *   step.card(callId) · step.newCard(name, callId) · step.text · step.finish() · step.destroy()
 *
 * Model output reaches the DOM only through StreamRenderer (sanitized per update).
 */

import { StreamRenderer } from "../render/markdown.js";
import { ReplyReducer } from "../store/reduce.js";
import { h } from "./dom.js";
import { language, t } from "./i18n.js";
import { ToolCard } from "./tool_card.js";

/** @typedef {import("../store/reduce.js").PartChange} PartChange */
/** @typedef {(callId: string | undefined, decision: import("./tool_card.js").Decision, ask: unknown) => void} Decide */
/** @typedef {{part: import("../types/contract").Part, index: number, added: boolean, delta?: string, done?: boolean}} Shown */

export class StepView {
  /** @param {{images: import("../render/images.js").ImagePolicy, decide?: Decide | null}} options */
  constructor({ images, decide = null }) {
    this.images = images;
    this.decide = decide;
    this.cards = new Map(); // call id -> ToolCard
    this.cardsByIndex = new Map(); // stream index -> ToolCard (before the call id is final)
    this.reply = new ReplyReducer(); // a live step's parts so far
    this.textShown = false;
    this.reasoningText = h("div", { className: "reasoning-text" });
    this.reasoning = h("details", { className: "reasoning", hidden: true },
      h("summary", {}, t("chat.thinking")), this.reasoningText);
    this.body = null; // the step's words, made when the first arrive: a step of tool calls alone has none
    this.renderer = null;
    this.toolsEl = h("div", { className: "tool-cards" });
    this.el = h("section", { className: "step" }, this.reasoning, this.toolsEl);
  }

  /** The text this step wrote (what Copy takes when it is the reply's last words). */
  get text() {
    return this.renderer?.text ?? "";
  }

  #words() {
    if (!this.renderer) {
      this.body = h("div", { className: "content markdown" });
      this.toolsEl.before(this.body);
      this.renderer = new StreamRenderer(this.body, {
        images: this.images,
        labels: markdownLabels(),
      });
    }
    return this.renderer;
  }

  /** @param {{parts: import("../types/contract").Part[]}} msg */
  fill(msg) {
    msg.parts.forEach((part, index) => {
      const text = "text" in part ? part.text ?? undefined : undefined; // a tool call has no text
      this.#showPart({ part, index, added: true, delta: text, done: true });
    });
    this.renderer?.finish();
  }

  /** One streamed event of this step (docs/PROTOCOL.md); returns what changed (reduce.js) for the reply. */
  /**
   * @param {import("../types/contract").CoreEvent} ev
   * @returns {import("../store/reduce.js").Change | null}
   */
  onEvent(ev) {
    const change = this.reply.apply(ev);
    if (change && "part" in change) this.#showPart(change);
    return change;
  }

  finish() {
    this.renderer?.finish();
  }

  /** @param {string} callId */
  card(callId) {
    return this.cards.get(callId);
  }

  /**
   * @param {string} name
   * @param {string} [callId]
   * @param {number} [index]
   */
  newCard(name, callId, index) {
    const card = new ToolCard({ name, callId, images: this.images,
                                onDecision: (decision, ask) => this.decide?.(card.callId, decision, ask) });
    if (callId) this.cards.set(callId, card);
    if (index !== undefined) this.cardsByIndex.set(index, card);
    this.toolsEl.append(card.el);
    return card;
  }

  destroy() {
    this.renderer?.destroy();
    for (const card of this.cards.values()) card.destroy();
  }

  /** Draw one change of a part (store/reduce.js): the same path for a stored step and a streamed one. */
  /** @param {Shown} shown */
  #showPart({ part, index, added, delta, done }) {
    switch (part.type) {
      case "text":
        if (added && this.textShown) this.#words().append("\n\n");
        if (delta) {
          this.textShown = true;
          this.#words().append(delta);
        }
        break;
      case "reasoning":
        if (delta) {
          this.reasoning.hidden = false;
          this.reasoningText.textContent += delta;
        }
        break;
      case "tool_call": {
        const card = this.cardsByIndex.get(index) ?? this.newCard(part.name, part.id, index);
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
}

const count = (/** @type {number} */ n) => n.toLocaleString(language());

/** What the markdown renderer says, in the page's language (a reply here, a shared conversation: share_link.js). */
export function markdownLabels() {
  return { copy: t("chat.copy"), copied: t("chat.copied"), copyFailed: t("chat.copyFailed"),
           openArtifact: t("artifact.open"), loadImage: () => t("chat.loadImage"),
           alwaysLoadImages: (/** @type {string} */ host) => t("chat.alwaysLoadImages", { host }),
           tooLongToFormat: (/** @type {number} */ length, /** @type {number} */ limit) => t("chat.tooLongToFormat", { length: count(length), limit: count(limit) }),
           couldNotFormat: t("chat.couldNotFormat") };
}
