/**
 * One message on screen: a user bubble, or a whole reply: one agent turn, however many steps it took (each
 * step's thinking, streamed markdown and tool cards, in order: web/app/step_view.js), under one header, with one
 * usage line (the steps' tokens added up, and what they cost: web/app/prices.js), the files the code wrote, status and one set of actions (Copy copies
 * the final text; Regenerate; ‹ 1/2 › branches; on a failed reply "Open settings" or "Retry":
 * actions.openSettings(), actions.retry(view)). User bubbles have Edit.
 *
 *   const view = new MessageView(msg, {images, actions})   msg: StoredMessage (or a live stub): the turn's first step
 *   view.el                                               an <li>
 *   view.addStep(msg)                                     a stored later step of the same turn (after tool results)
 *   live replies: view.beginStep(msg) · view.onEvent(streamEvent)   the current step's deltas, usage, error
 *                 view.card(callId)                       its ToolCard, in any step (approval, progress, result);
 *                 actions.decide(callId, "allow"|"always"|"deny", approvalEvent)   a button on a card
 *                 view.setState(state)                    waiting|streaming|done|interrupted|error
 *                 view.showFiles(items)                   files the code wrote, under the reply
 *   view.attachResults(toolResultsMsg)                    fill the cards from the message after a step (each result
 *                                                         part's display: what its card shows)
 *
 * Model output is untrusted: it reaches the DOM only through StreamRenderer (sanitized per update).
 * The user's own text is set as text.
 */

import { renderToolContent } from "../render/tool_result.js";
import { decodeBase64, sniffAudio } from "../render/media_bytes.js";
import { toMcpContent } from "../store/reduce.js";
import { fileResource, PYTHON_TOOL } from "../sandbox/tool.js";
import { artifactOfFile } from "../artifacts/artifact.js";
import { h } from "./dom.js";
import { errorNotice } from "./error_notice.js";
import { language, t } from "./i18n.js";
import { loadPrices, money, onPricesChange, prices } from "./prices.js";
import { StepView } from "./step_view.js";
import { textOf } from "./tree.js";
import { vendorLabel } from "./vendors.js";

/**
 * @typedef {import("../types/contract").Part} Part
 * @typedef {import("../types/contract").ToolResultPart} ToolResultPart
 * @typedef {import("../types/contract").ToolDisplay} ToolDisplay
 * @typedef {import("../types/contract").ErrorInfo} ErrorInfo
 * @typedef {import("../types/contract").Usage} Usage
 * @typedef {import("../store/transcripts.js").StoredMessage} StoredMessage
 * @typedef {import("../render/tool_result.js").McpItem} McpItem
 * @typedef {import("../mcp_app/view.js").CallToolResult} CallToolResult
 * @typedef {import("./tool_card.js").ToolCard} ToolCard
 */
/**
 * What a view draws: a stored message, or the stub of a live reply (its role and parts, what else it knows).
 * @typedef {Pick<StoredMessage, "role" | "parts"> & Partial<StoredMessage>} ViewMessage
 * @typedef {"waiting" | "streaming" | "done" | "interrupted" | "error"} ViewState
 * @typedef {{index: number, count: number}} Siblings   this message's place among its branches (1-based)
 * @typedef {{field?: string, vendor?: string, model?: string}} SettingsPlace
 */
/**
 * What the buttons and cards of a message do (Chat gives them; each is optional).
 * @typedef {{edit?: (view: MessageView) => void, regenerate?: (view: MessageView) => void,
 *            retry?: (view: MessageView) => void, branch?: (view: MessageView, delta: number) => void,
 *            openSettings?: (where: SettingsPlace) => void, decide?: import("./step_view.js").Decide,
 *            openResource?: (source: string | null | undefined) => import("../render/tool_result.js").OpenResource | null,
 *            showApp?: (card: ToolCard, app: import("../types/contract").AppViewRef, result: CallToolResult) => void,
 *            openArtifact?: (artifact: import("../artifacts/artifact.js").Artifact) => void}}
 *   MessageActions
 */

const COPY_FEEDBACK_MS = 1500; // as long as a code block's Copy says "Copied" (web/render/code_blocks.js)

export class MessageView {
  /**
   * @param {ViewMessage} msg
   * @param {{images: import("../render/images.js").ImagePolicy, actions?: MessageActions, siblings?: Siblings | null,
   *          live?: boolean}} options
   */
  constructor(msg, { images, actions = {}, siblings = null, live = false }) {
    this.msg = msg;
    this.images = images;
    this.actions = actions;
    /** @type {StepView[]} a reply's steps, in order */
    this.steps = [];
    /** @type {(Usage | null)[]} each step's usage, added up on the reply's one line */
    this.usages = [];
    /** @type {(() => void) | null} stops redrawing the usage line when prices change (destroy) */
    this.offPrices = null;
    /** @type {McpItem[]} what the code wrote, shown under the reply */
    this.files = [];
    /** @type {import("../artifacts/artifact.js").Artifact[]} what the `artifact` tool kept in this reply, in order */
    this.artifacts = [];
    // A reply's parts (a user bubble has them too, never shown).
    this.meta = h("div", { className: "meta" });
    this.stepsEl = h("div", { className: "steps" });
    this.filesEl = h("div", { className: "reply-files", hidden: true, "aria-label": t("chat.filesWritten") });
    this.notice = h("div", { className: "notice", hidden: true });
    this.usageEl = h("div", { className: "usage" });
    this.el = h("li", { className: `msg ${msg.role}`, dataset: { id: msg.id ?? "" } });
    this.el.dataset.state = stateOf(msg);
    if (msg.role === "user") this.#buildUser(msg);
    else this.#buildAssistant(msg, live);
    if (siblings && siblings.count > 1) this.el.append(this.#branchNav(siblings));
  }

  /** @param {ViewMessage} msg */
  #buildUser(msg) {
    this.body = h("div", { className: "content" }, textOf(msg));
    const images = msg.parts.filter((p) => p.type === "image");
    const thumbs = images.map((p) => h("img", { className: "thumb", alt: "", src: `data:${p.mime_type};base64,${p.data}` }));
    const files = msg.parts.filter((p) => p.type === "document").map((p) => p.mime_type.startsWith("audio/")
      ? h("li", { className: "file audio", title: p.mime_type }, `${fileIcon(p)} ${p.name}`, clipPlayer(p))
      : h("li", { className: "file", title: p.text === undefined ? t("chat.pdfTextOnly") : p.mime_type }, `📄 ${p.name}`));
    this.el.append(this.body);
    if (thumbs.length) this.el.append(h("div", { className: "thumbs" }, thumbs));
    if (files.length) this.el.append(h("ul", { className: "files", "aria-label": t("chat.attachedFiles") }, files));
    if (this.actions.edit) {
      this.el.append(h("div", { className: "actions" },
        h("button", { type: "button", className: "edit", onclick: () => this.actions.edit?.(this) }, t("chat.edit"))));
    }
  }

  /**
   * @param {ViewMessage} msg
   * @param {boolean} live
   */
  #buildAssistant(msg, live) {
    this.el.append(this.meta, this.stepsEl, this.filesEl, this.notice, this.usageEl);
    this.#setMeta(msg);
    if (live) this.beginStep(msg);
    else this.addStep(msg);
    this.#addActions();
  }

  /**
   * A live reply becomes the stored one at the turn's end: its message (id, parent), the actions a stored reply has
   * and its ‹ 1/2 › branches, without drawing anything again (an MCP App view on its cards keeps running).
   */
  /**
   * @param {StoredMessage} msg
   * @param {{siblings?: Siblings | null, actions?: MessageActions}} [options]
   */
  adopt(msg, { siblings = null, actions = {} } = {}) {
    this.msg = { ...msg, parts: this.msg.parts?.length ? this.msg.parts : msg.parts };
    this.el.dataset.id = msg.id ?? "";
    Object.assign(this.actions, actions);
    if (this.steps[0]) this.steps[0].el.dataset.id = msg.id ?? "";
    if (!this.el.querySelector(":scope > .actions .regenerate") && this.actions.regenerate) {
      this.el.querySelector(":scope > .actions")?.append(h("button", { type: "button", className: "regenerate",
                                                                       onclick: () => this.actions.regenerate?.(this) },
                                                         t("chat.regenerate")));
    }
    this.el.querySelector(":scope > nav.branches")?.remove();
    if (siblings && siblings.count > 1) this.el.append(this.#branchNav(siblings));
  }

  /** The current step (the last one): the one a live event belongs to. */
  get step() {
    return this.steps[this.steps.length - 1];
  }

  /** @param {{vendor?: string, model?: string}} msg */
  #setMeta(msg) {
    const who = [msg.vendor ? vendorLabel(msg.vendor) : null, msg.model].filter(Boolean).join(" · ");
    this.meta.textContent = who;
  }

  /** A new live step of this turn (after its tool results went back to the model). */
  /** @param {{vendor?: string, model?: string}} [msg] */
  beginStep(msg = {}) {
    const step = new StepView({ images: this.images, decide: this.actions.decide });
    this.steps.push(step);
    this.stepsEl.append(step.el);
    this.usages.push(null);
    if (msg.vendor && !this.meta.textContent) this.#setMeta(msg);
    return step;
  }

  /** A stored step: the first of the turn, or a later one drawn into the same reply. */
  /** @param {ViewMessage} msg */
  addStep(msg) {
    const step = this.beginStep(msg);
    step.el.dataset.id = msg.id ?? ""; // a search hit in a later step is found here
    step.fill(msg);
    this.el.dataset.state = stateOf(msg); // the reply is as its last step left it
    this.setUsage(msg.usage);
    if (msg.status === "interrupted") this.#showNotice(t("chat.interrupted"));
    if (msg.error) this.showError(msg.error);
    this.stepMessages = [...(this.stepMessages ?? []), msg];
  }

  #addActions() {
    const bar = h("div", { className: "actions" });
    const copy = h("button", { type: "button", className: "copy" }, t("chat.copy"));
    copy.addEventListener("click", () => this.#copy(copy));
    // "Read aloud" is heard by web/app/voice.js, which reads the same words Copy takes
    const read = h("button", { type: "button", className: "read-aloud", "aria-pressed": "false" }, t("voice.readAloud"));
    read.addEventListener("click", () => read.dispatchEvent(new CustomEvent("read-aloud", {
      bubbles: true, detail: { text: this.#finalWords(), button: read } })));
    bar.append(copy, read);
    if (this.actions.regenerate) {
      bar.append(h("button", { type: "button", className: "regenerate", onclick: () => this.actions.regenerate?.(this) },
        t("chat.regenerate")));
    }
    this.el.append(bar);
  }

  /** @param {Siblings} siblings */
  #branchNav({ index, count }) {
    return h("nav", { className: "branches", "aria-label": t("chat.branch", { index, count }) },
      h("button", { type: "button", "aria-label": t("chat.prevBranch"), disabled: index <= 1,
                    onclick: () => this.actions.branch?.(this, -1) }, "‹"),
      h("span", { className: "branch-pos" }, t("chat.branch", { index, count })),
      h("button", { type: "button", "aria-label": t("chat.nextBranch"), disabled: index >= count,
                    onclick: () => this.actions.branch?.(this, +1) }, "›"));
  }

  /** The reply's final words: the last step that wrote any. */
  #finalWords() {
    return [...this.steps].reverse().map((step) => step.text).find((words) => words.trim()) ?? textOf(this.msg);
  }

  /** Copy takes the reply's final words (the last step that wrote any), and says so on the button for a moment. */
  /** @param {HTMLElement} button */
  async #copy(button) {
    const text = this.#finalWords();
    let said = t("chat.copied");
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      said = t("chat.copyFailed"); // clipboard refused (no focus / permission)
    }
    button.textContent = said;
    clearTimeout(this.copyTimer);
    this.copyTimer = setTimeout(() => (button.textContent = t("chat.copy")), COPY_FEEDBACK_MS);
  }

  /**
   * @param {string} text
   * @param {boolean} [isError]
   */
  #showNotice(text, isError = false) {
    this.notice.hidden = false;
    this.notice.classList.toggle("error", isError);
    this.notice.textContent = text;
  }

  /** @param {ViewState} state */
  setState(state) {
    this.el.dataset.state = state;
    if (state === "interrupted") this.#showNotice(t("chat.interrupted"));
  }

  /** The current step's usage; the line shows every step's added up (what the turn cost). */
  /** @param {Usage | null | undefined} usage */
  setUsage(usage) {
    if (!usage || (usage.input_tokens == null && usage.output_tokens == null)) return;
    this.usages[this.usages.length - 1] = usage;
    this.#drawUsage();
  }

  #drawUsage() {
    const known = this.usages.filter((u) => u !== null);
    if (!known.length) return;
    /** @param {"input_tokens" | "output_tokens"} key */
    const sum = (key) => (known.some((u) => u[key] == null) ? "?" : known.reduce((total, u) => total + (u[key] ?? 0), 0));
    const tokens = t("chat.usage", { input: sum("input_tokens"), output: sum("output_tokens") });
    const cost = this.#cost(known);
    this.usageEl.textContent = cost ? `${tokens} · ${cost}` : tokens;
  }

  /**
   * What the reply's steps cost, in the user's currency; "price unknown" for a model without a price; nothing while
   * the price data loads (the line is drawn again when it is here, and when the user's prices change).
   * @param {Usage[]} usages
   */
  #cost(usages) {
    this.offPrices ??= onPricesChange(() => this.#drawUsage());
    const p = prices();
    let usd = 0;
    for (const usage of usages) {
      const cost = p.cost(usage, this.msg.vendor, this.msg.model);
      if (cost === undefined) return void loadPrices().catch(() => {}); // drawn again once loaded (onPricesChange)
      if (cost === null) return t("cost.unknown");
      usd += cost;
    }
    return money(usd, p.settings, language());
  }

  /** A failed reply: what went wrong and what to do (web/app/error_notice.js). `error`: pycore's ErrorInfo. */
  /** @param {ErrorInfo | string} error */
  showError(error) {
    const info = typeof error === "string" ? { message: error } : { ...error };
    if (this.msg.vendor) info.vendor = this.msg.vendor; // the profile's ("OpenAI-compatible"), not the adapter's
    this.notice.hidden = false;
    this.notice.classList.add("error");
    const { openSettings } = this.actions; // on the profile that failed (its vendor and model)
    this.notice.replaceChildren(errorNotice(info, {
      openSettings: openSettings && ((where) => openSettings({ ...where, vendor: this.msg.vendor, model: this.msg.model })),
      retry: this.actions.retry ? () => this.actions.retry?.(this) : null,
    }));
  }

  /** @param {string} callId */
  card(callId) {
    for (const step of this.steps) {
      const card = step.card(callId);
      if (card) return card;
    }
    return undefined;
  }

  /** One streamed event of the current step (docs/PROTOCOL.md), folded into parts by store/reduce.js. */
  /** @param {import("../types/contract").CoreEvent} ev */
  onEvent(ev) {
    const change = this.step.onEvent(ev);
    if (change && "usage" in change) this.setUsage(change.usage);
    else if (change && "error" in change) this.showError(change.error ?? { message: "error" });
  }

  finishStream() {
    this.step?.finish();
  }

  /**
   * Fill this reply's tool cards from the message that carries their results: each result part's `display`
   * (pycore.messages.ToolDisplay) says what its card shows beyond what the model got.
   */
  /** @param {{parts: Part[]}} resultsMsg */
  attachResults(resultsMsg) {
    for (const part of resultsMsg.parts) {
      if (part.type !== "tool_result") continue;
      const card = this.card(part.call_id) ?? this.step.newCard(part.name ?? "tool", part.call_id);
      /** @type {ToolDisplay} */
      const shown = part.display ?? {};
      if (shown.denied) card.setStatus("denied"); // the user said no
      else if (shown.stopped) card.setStatus("stopped"); // the user's Stop, no failure of the tool
      // Files a tool wrote (the code interpreter's downloads) are kept beside the result: offered again, on the
      // card and under the reply.
      const files = (shown.files ?? []).map(fileResource);
      card.setResult([...resultItems(part), ...files],
                     { isError: part.is_error, durationMs: shown.duration_ms ?? undefined, structured: shown.structured,
                       schemaProblem: shown.schema_problem, openResource: this.actions.openResource?.(shown.source) ?? null });
      card.showAsked(shown.asked ?? []);
      this.showFiles(files);
      this.#offerArtifacts(card, part);
      if (shown.app && !card.view) this.actions.showApp?.(card, shown.app, appResult(part));
    }
  }

  /**
   * What a call made that opens as an artifact, offered on its card: the `artifact` tool's document (one version of
   * it: this.artifacts keeps them in order, for the panel's versions), the pictures and files the code wrote.
   * @param {ToolCard} card
   * @param {ToolResultPart} part
   */
  #offerArtifacts(card, part) {
    const open = this.actions.openArtifact;
    if (!open) return;
    const kept = part.display?.artifact;
    if (kept) {
      const artifact = { ...kept, title: kept.title || kept.id };
      this.artifacts.push(artifact);
      card.showOpeners([{ label: t("artifact.openNamed", { title: artifact.title }), open: () => open(artifact) }]);
      return;
    }
    if (part.name !== PYTHON_TOOL.name) return;
    const made = [...(part.content ?? []).flatMap((item) => (item.type === "image" ? [{ ...item, name: null }] : [])),
                  ...(part.display?.files ?? [])];
    card.showOpeners(made.flatMap((file, i) => {
      const artifact = artifactOfFile({ ...file, name: file.name ?? t("artifact.picture", { n: i + 1 }) });
      return artifact ? [{ label: t("artifact.openNamed", { title: artifact.title }), open: () => open(artifact) }] : [];
    }));
  }

  /** Files the code wrote (MCP resource items with their bytes), as downloads under the reply. */
  /** @param {McpItem[]} items */
  showFiles(items) {
    if (!items.length) return;
    this.files.push(...items);
    this.filesView?.destroy();
    this.filesEl.hidden = false;
    this.filesView = renderToolContent(this.filesEl, this.files, { images: this.images, labels: {
      download: (name, size) => t("chat.download", { name, size }) } });
  }

  destroy() {
    this.offPrices?.();
    this.filesView?.destroy();
    for (const step of this.steps) step.destroy();
  }
}

/**
 * A recorded clip's sign, and a ▶ that plays it from its own bytes (only bytes that are audio: media_bytes.js).
 * @param {{mime_type: string}} part
 */
export function fileIcon(part) {
  return part.mime_type.startsWith("audio/") ? "🎤" : "📄";
}

/** @param {{name: string, data?: string | null}} part */
function clipPlayer(part) {
  const play = h("button", { type: "button", className: "icon play-clip", "aria-label": t("voice.play", { name: part.name }) },
    "▶");
  play.addEventListener("click", () => {
    let bytes = new Uint8Array();
    try {
      bytes = decodeBase64(part.data ?? "", 32 * 1024 * 1024); // a clip may be as large as an attached file (25 MB)
    } catch {
      // not base64: said below, as bytes that are not audio
    }
    const type = sniffAudio(bytes);
    if (!type) return void play.replaceWith(h("span", { className: "hint" }, t("voice.notAudio")));
    const audio = h("audio", { controls: true, src: URL.createObjectURL(new Blob([bytes], { type })) });
    play.replaceWith(audio);
    audio.play().catch(() => {}); // the controls are there to press
  });
  return play;
}

/**
 * @param {{status?: string}} msg
 * @returns {ViewState}
 */
function stateOf(msg) {
  if (msg.status === "interrupted") return "interrupted";
  if (msg.status === "error") return "error";
  if (msg.status === "streaming") return "streaming";
  return "done";
}

/** A result's items as its card draws them: the server's as sent when the model's content does not carry them whole. */
/**
 * @param {ToolResultPart} part
 * @returns {McpItem[]}
 */
function resultItems(part) {
  return part.display?.content ?? toMcpContent(part.content);
}

/**
 * The call's result as an MCP App view takes it (CallToolResult): its items are the server's as it sent them, which
 * the view checks as it does any server's.
 * @param {ToolResultPart} part
 * @returns {CallToolResult}
 */
function appResult(part) {
  const result = /** @type {CallToolResult} */ ({ content: resultItems(part), isError: Boolean(part.is_error) });
  if (part.display?.structured !== undefined && part.display.structured !== null) {
    result.structuredContent = part.display.structured;
  }
  return result;
}
