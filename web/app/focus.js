/**
 * Focus memory in the app: the panel (web/focus/panel.js) for the conversation on screen, and the
 * two calls around each turn when the conversation has it switched on.
 *
 *   const focus = new FocusMemory({core, store, element, classifier, notify, t, locale, ready})
 *   Under the panel, focus/templates.js edits the prompt templates (kept in Settings' preferences).
 *   focus.show(conversationId | null, state | undefined)   the conversation on screen changed
 *   focus.enabled                    the switch is on for this conversation
 *   await focus.settled()            a running focus.update has finished (the next send waits for it)
 *   await focus.created(id)          a new conversation got its id: the state chosen before it is stored
 *   await focus.synthesize(text, system?) -> {system, messages, ...} (focus.synthesize) to send instead of the history
 *   focus.afterReply({conversationId, message: {id, text}, reply, target})
 *                                    focus.update in the background: classify, fold in, store, show
 *   focus.setT(t)                    language changed
 *
 * `classifier(target)` returns {provider, model} for the classifier (Settings: a chosen profile and
 * model, by default the conversation's own) or throws an Error saying what is missing. The API key
 * goes to the worker with each call and never into the focus state, the store or an export.
 *
 * The user may edit the panel while focus.update runs; when it returns, their edits are laid over
 * its result (mergeEdits): what they changed, deleted or added wins, the classifier's additions stay.
 */

import { mountFocusPanel } from "../focus/panel.js";
import { messageOf } from "./error_notice.js";
import { t as appT, onLanguageChange } from "./i18n.js";
import { TemplatesEditor } from "../focus/templates.js";
import { PREFS, prefs } from "../store/prefs.js";

/**
 * @typedef {import("../types/contract").FocusState} FocusState
 * @typedef {import("../types/contract").Item} FocusItem
 * @typedef {import("../types/contract").ClassifierSpec} ClassifierSpec
 * @typedef {import("./i18n.js").Translate} Translate
 */

export class FocusMemory {
  /**
   * @param {{core: import("../client/orizuru.js").Agent, store: import("../store/transcripts.js").Store,
   *   element: HTMLElement, classifier: (target: unknown) => ClassifierSpec | null,
   *   notify?: import("./notify.js").Notify, t?: Translate | null, locale?: () => string,
   *   ready?: Promise<unknown> | null}} parts
   */
  constructor({ core, store, element, classifier, notify = () => {}, t = null, locale = () => "en", ready = null }) {
    onLanguageChange(() => this.setT(appT)); // drawn again in the new language
    this.core = core;
    this.store = store;
    this.classifier = classifier;
    this.notify = notify;
    this.locale = locale;
    /** @type {string | null} */
    this.conversationId = null;
    /** @type {FocusState | null} */
    this.state = null;
    /** @type {{promise: Promise<void>} | null} */
    this.pending = null; // {promise, base}: the focus.update in flight
    this.editedDuringUpdate = false;
    this.element = element;
    this.panel = mountFocusPanel(element, { state: null, t,
                                            onChange: (/** @type {FocusState} */ next) => this.#edited(next) });
    // The user's edits of the prompt templates, for every conversation (the core checks and renders them).
    this.templates = new TemplatesEditor(element, {
      core, ready: ready ?? Promise.resolve(), t: t ?? appT, locale,
      templates: () => prefs.getJSON(PREFS.focusTemplates, {}),
      save: (/** @type {Record<string, string>} */ edits) => prefs.setJSON(PREFS.focusTemplates, edits),
      state: () => this.state && { ...this.state }, // (a copy: the wire's state is a plain record)
    });
  }

  get enabled() {
    return Boolean(this.state?.enabled);
  }

  /**
   * @param {string | null} conversationId
   * @param {FocusState | null | undefined} state
   */
  show(conversationId, state) {
    if (conversationId !== this.conversationId) {
      this.panel.setStatus(null);
      this.panel.setPrompt(null);
    }
    this.conversationId = conversationId;
    this.state = state ?? null;
    this.panel.update(this.state);
    this.element.dataset.focus = this.enabled ? "on" : "off";
  }

  /** @param {Translate} t */
  setT(t) {
    this.panel.setT(t);
    this.templates.setT(t);
  }

  settled() {
    return this.pending?.promise ?? Promise.resolve();
  }

  /** @param {string} conversationId */
  async created(conversationId) {
    this.conversationId = conversationId;
    if (this.state) await this.#save(conversationId, this.state);
  }

  /**
   * @param {string} text
   * @param {string} [system]
   * @returns {Promise<import("../types/contract").Synthesis>}
   */
  async synthesize(text, system = undefined) {
    const result = await this.core.call("focus.synthesize", { state: this.state && { ...this.state }, text, system, locale: this.locale(),
                                                              templates: prefs.getJSON(PREFS.focusTemplates, {}) });
    this.panel.setPrompt(result);
    return result;
  }

  /**
   * @param {{conversationId: string, message: import("../types/contract").FocusMessage, reply: string,
   *   target: unknown}} turn
   */
  afterReply({ conversationId, message, reply, target }) {
    const base = this.state;
    let classifier = null;
    try {
      classifier = this.classifier(target);
    } catch (err) {
      this.notify(messageOf(err), { error: true }); // the exchange is still recorded, unclassified
    }
    this.element.dataset.updating = "true";
    this.editedDuringUpdate = false;
    /** @type {import("../types/contract").Params<"focus.update">} */
    const params = { state: base && { ...base }, message, reply }; // (a copy: the wire's state is a plain record)
    if (classifier) params.classifier = classifier;
    const updated = /** @type {Promise<import("../types/contract").UpdateResult>} */ (this.core.call("focus.update", params));
    const promise = updated.then(async (result) => {
      let state = result.state;
      if (this.editedDuringUpdate && this.conversationId === conversationId) state = mergeEdits(base, this.state, state);
      await this.#save(conversationId, state);
      if (this.conversationId === conversationId) {
        this.state = state;
        this.panel.update(state);
        this.panel.setStatus(result);
      }
    }).catch((err) => {
      if (this.conversationId === conversationId) this.panel.setStatus({ ok: false, error: messageOf(err) });
    }).finally(() => {
      if (this.pending?.promise === promise) this.pending = null;
      delete this.element.dataset.updating;
    });
    this.pending = { promise };
    return promise;
  }

  /** @param {FocusState} next */
  async #edited(next) {
    this.state = next;
    this.element.dataset.focus = this.enabled ? "on" : "off";
    if (this.pending) this.editedDuringUpdate = true;
    if (this.conversationId) await this.#save(this.conversationId, next);
  }

  /**
   * @param {string} conversationId
   * @param {FocusState} state
   */
  async #save(conversationId, state) {
    try {
      await this.store.setFocus(conversationId, state);
    } catch (err) {
      this.notify(messageOf(err), { error: true });
    }
  }
}

/**
 * The classifier's new state `theirs` with the user's edits (from `base` to `mine`) laid over it.
 * @param {FocusState | null} base
 * @param {FocusState | null} mine
 * @param {FocusState} theirs
 * @returns {FocusState}
 */
export function mergeEdits(base, mine, theirs) {
  /** @type {(a: unknown, b: unknown) => boolean} */
  const same = (a, b) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  const out = structuredClone(theirs);
  out.enabled = mine?.enabled ?? out.enabled;
  if (!same(base?.core, mine?.core)) out.core = mine?.core ?? null;
  const baseItems = new Map((base?.evolving ?? []).map((item) => [item.id, item]));
  const mineItems = new Map((mine?.evolving ?? []).map((item) => [item.id, item]));
  const evolving = (out.evolving ?? []).filter((item) => !(baseItems.has(item.id) && !mineItems.has(item.id)));
  for (const [id, item] of mineItems) {
    const i = evolving.findIndex((other) => other.id === id);
    if (baseItems.has(id)) {
      if (!same(baseItems.get(id), item) && i >= 0) evolving[i] = structuredClone(item);
    } else {
      const numbers = evolving.map((other) => Number(other.id.slice(1))).filter(Number.isFinite);
      evolving.push({ ...structuredClone(item), id: i >= 0 ? `c${Math.max(0, ...numbers) + 1}` : id });
    }
  }
  const ids = new Set(evolving.map((item) => item.id));
  for (const item of evolving) item.conflicts_with = (item.conflicts_with ?? []).filter((id) => ids.has(id));
  out.evolving = evolving;
  return out;
}
