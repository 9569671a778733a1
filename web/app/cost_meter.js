/**
 * The line under the message box: what this conversation and today cost, and how much of the model's context
 * window the next request will fill, with a warning before it is exceeded and what happens then (focus memory
 * keeps the goal and sends the latest exchanges, and says how many earlier ones it left out). And the spending
 * caps (Settings → Costs): a request that would pass one is not sent, and says why. Figures: web/app/prices.js.
 *
 *   const meter = new CostMeter({element, draft, focusOn})   draft(): the message box's text; focusOn(): focus memory
 *   meter.show(view)                     the conversation on screen changed: {messages, path, vendor?, model?}
 *   meter.focused(synthesis)             focus.synthesize's answer for the request just sent (what it left out)
 *   await meter.refusal(view) -> string | null   before a turn's request: the cap it would pass, said; else null
 *   await meter.stepDone(usage, vendor, model) -> string | null   a step's cost to today's spend; the cap that
 *                                        is now reached, said (the run is then stopped before its next request)
 */

import { h } from "./dom.js";
import { language, onLanguageChange, t } from "./i18n.js";
import { textOf } from "./tree.js";
import { capBreach, contextLevel, contextTokens, costSettings, loadPrices, money, onPricesChange, prices, spendOf,
         todaySpend, recordSpend } from "./prices.js";

/**
 * @typedef {import("../store/transcripts.js").StoredMessage} StoredMessage
 * @typedef {import("../types/contract").Usage} Usage
 * @typedef {{messages: StoredMessage[], path: StoredMessage[], vendor?: string, model?: string}} MeterView
 *   the conversation's every message (each branch was paid for), the path the next request sends, and its model
 */

export class CostMeter {
  /**
   * @param {{element: HTMLElement, draft?: () => string, focusOn?: () => boolean}} parts
   */
  constructor({ element, draft = () => "", focusOn = () => false }) {
    this.element = element;
    this.draft = draft;
    this.focusOn = focusOn;
    /** @type {MeterView} */
    this.view = { messages: [], path: [] };
    /** @type {import("../types/contract").Synthesis | null} */
    this.synthesis = null;
    this.turnSpent = 0; // what the running turn's steps cost so far (not in `view.messages` until it is stored)
    onLanguageChange(() => this.render());
    onPricesChange(() => this.render());
  }

  /** @param {MeterView} view */
  show(view) {
    if (!view.messages.length) this.synthesis = null; // a new chat: nothing left out yet
    this.view = view;
    this.turnSpent = 0;
    if (view.messages.length || view.model) loadPrices().catch(() => {}); // drawn again once it is here
    this.render();
  }

  /** @param {import("../types/contract").Synthesis} synthesis */
  focused(synthesis) {
    this.synthesis = synthesis;
    this.render();
  }

  render() {
    const { vendor, model } = this.view;
    const p = prices();
    const spend = spendOf(this.view.messages, p);
    const settings = costSettings();
    const amount = (/** @type {number} */ usd) => money(usd, settings, language());
    const chat = spend.unpriced ? t("cost.plusUnknown", { amount: amount(spend.usd) }) : amount(spend.usd);
    const tokens = this.#nextTokens();
    const window = p.window(vendor, model);
    const level = contextLevel(tokens, window);
    const format = (/** @type {number} */ n) => n.toLocaleString(language());
    const context = window
      ? t("cost.context", { tokens: format(tokens), window: format(window), percent: Math.round((tokens / window) * 100) })
      : t("cost.contextUnknown", { tokens: format(tokens) });
    const warning = level === "near" || level === "over" ? this.#warning(level) : null;
    this.element.dataset.level = level;
    const spent = t("cost.spent", { chat, day: amount(todaySpend()) });
    this.element.replaceChildren(
      h("span", { className: "cost-spent", title: spent }, spent), // whole on hover where a phone cuts it short
      h("span", { className: "cost-context" }, context),
      ...(warning ? [h("span", { className: "cost-warning", role: "status" }, warning)] : []));
  }

  /** @param {"near" | "over"} level */
  #warning(level) {
    const head = t(level === "near" ? "cost.near" : "cost.over");
    if (!this.focusOn()) return `${head} ${t("cost.focusOff")}`;
    if (!this.synthesis) return `${head} ${t("cost.focusOnNext")}`;
    return `${head} ${t("cost.focusOn", { recent: this.synthesis.recent, omitted: this.synthesis.omitted })}`;
  }

  /** The tokens the next request will carry: the path (its last counted step, then the rest) and the draft. */
  #nextTokens() {
    const items = this.view.path.map((m) => ({ usage: m.usage, chars: textOf(m).length }));
    return contextTokens(items, this.draft().length);
  }

  /**
   * Before a turn's first request: the cap it would pass (its input alone counted), said; else null.
   * @param {MeterView} view
   * @returns {Promise<string | null>}
   */
  async refusal(view) {
    this.view = view;
    this.turnSpent = 0;
    const { caps } = costSettings();
    if (caps.conversation == null && caps.day == null) return null;
    const p = await loadPrices().catch(() => prices()); // without the data only the user's own prices count
    const next = p.cost({ input_tokens: this.#nextTokens(), output_tokens: 0 }, view.vendor, view.model) ?? 0;
    return this.#said(capBreach({ conversation: spendOf(view.messages, p).usd, day: todaySpend() }, p.settings, next));
  }

  /**
   * A step of the running turn has ended: its cost goes to today's spend; when a cap is now reached, it is said.
   * @param {Usage | null} usage
   * @param {string | undefined} vendor
   * @param {string | undefined} model
   * @returns {Promise<string | null>}
   */
  async stepDone(usage, vendor, model) {
    if (!usage) return null;
    const p = await loadPrices().catch(() => prices());
    const usd = p.cost(usage, vendor, model) ?? 0;
    this.turnSpent += usd;
    recordSpend(usd);
    const conversation = spendOf(this.view.messages, p).usd + this.turnSpent;
    return this.#said(capBreach({ conversation, day: todaySpend() }, p.settings, 0));
  }

  /** @param {import("./prices.js").Breach | null} breach */
  #said(breach) {
    if (!breach) return null;
    const settings = costSettings();
    const vars = { spent: money(breach.spent, settings, language()), cap: money(breach.cap, settings, language()) };
    return t(breach.scope === "conversation" ? "cost.capConversation" : "cost.capDay", vars);
  }
}
