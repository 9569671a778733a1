/**
 * The focus memory panel: the "Focus memory" switch, the goal and the constraints (each editable,
 * pinnable, deletable), contradiction flags, and what the classifier has cost.
 *
 *   import { mountFocusPanel } from "../focus/panel.js";      // + web/focus/panel.css
 *   const panel = mountFocusPanel(element, {
 *     state,                  // the conversation's focus state (focus.update's "state"), or null
 *     onChange(newState) {},  // every user edit: store it (store.setFocus) and send it next turn
 *     t,                      // optional: (key, vars) => text; default the app's t (web/app/i18n.js)
 *   });
 *   panel.update(state)       // after focus.update returns (or the conversation changes)
 *   panel.setStatus(result)   // focus.update's result: last labels, reason, cost, error
 *   panel.setPrompt(synth)    // focus.synthesize's {tokens, budget, over_budget}
 *   panel.setT(t)             // language changed
 *   panel.destroy()
 *
 * State in, new state out: the panel never mutates what it was given. Everything shown (much of it
 * written by a model) goes in as text nodes, never as HTML.
 */

import { h } from "../app/dom.js";
import { t as appT } from "../app/i18n.js";

/**
 * The conversation's focus state as the core writes it: the contract's FocusState with every field present.
 * @typedef {import("../types/contract").FocusState} FocusState
 * @typedef {Required<import("../types/contract").Item>} FocusItem
 * @typedef {Omit<Required<FocusState>, "evolving" | "cost"> & {evolving: FocusItem[],
 *   cost: Required<import("../types/contract").Cost>}} PanelState
 * @typedef {typeof appT} Translate
 * @typedef {Pick<import("../types/contract").Synthesis, "tokens" | "budget" | "over_budget">} PromptSize
 * @typedef {import("../types/contract").UpdateResult | {ok: false, error: string}} FocusStatus
 *   focus.update's result, or the page's word that the call failed
 * @typedef {{state?: FocusState | null, onChange?: (state: PanelState) => void, t?: Translate | null}} PanelOptions
 */

/** @type {Readonly<PanelState>} */
const EMPTY = Object.freeze({ version: 1, enabled: false, core: null, evolving: [], turn: [], window: 3, seen: 0,
  cost: { calls: 0, failures: 0, input_tokens: 0, output_tokens: 0 } });

/** @param {FocusItem[]} evolving */
function nextId(evolving) {
  const numbers = evolving.map((item) => Number(item.id.slice(1))).filter(Number.isFinite);
  return `c${Math.max(0, ...numbers) + 1}`;
}

/**
 * @param {PanelState} state
 * @param {string} id
 * @returns {PanelState}
 */
function withoutItem(state, id) {
  const evolving = state.evolving
    .filter((item) => item.id !== id)
    .map((item) => ({ ...item, conflicts_with: item.conflicts_with.filter((other) => other !== id) }));
  return { ...state, evolving };
}

/**
 * @param {Element} element
 * @param {PanelOptions} [options]
 */
export function mountFocusPanel(element, options = {}) {
  const panel = new FocusPanel(element, options);
  return {
    /** @param {FocusState | null} next */
    update(next) { panel.update(next); },
    /** @param {FocusStatus | null} result */
    setStatus(result) { panel.setStatus(result); },
    /** @param {PromptSize | null} synthesis */
    setPrompt(synthesis) { panel.setPrompt(synthesis); },
    /** @param {Translate} next */
    setT(next) { panel.setT(next); },
    state() { return structuredClone(panel.current); },
    destroy() { panel.root.remove(); },
  };
}

/** The panel's state (what the user sees and edits) and its drawing: each section a method. */
class FocusPanel {
  /**
   * @param {Element} element
   * @param {PanelOptions} [options]
   */
  constructor(element, { state = null, onChange = () => {}, t = null } = {}) {
    this.current = stateOf(state);
    this.tr = t ?? appT;
    this.onChange = onChange;
    /** @type {FocusStatus | null} */
    this.status = null;
    /** @type {PromptSize | null} */
    this.prompt = null;
    /** @type {string | null} */
    this.editing = null; // "core" or an item id
    this.root = h("section", { className: "focus-panel" });
    element.append(this.root);
    this.render();
  }

  /** @param {FocusState | null} next */
  update(next) {
    this.current = stateOf(next);
    this.editing = null;
    this.render();
  }

  /** @param {FocusStatus | null} result */
  setStatus(result) {
    this.status = result;
    this.render();
  }

  /** @param {PromptSize | null} synthesis */
  setPrompt(synthesis) {
    this.prompt = synthesis;
    this.render();
  }

  /** @param {Translate} next */
  setT(next) {
    this.tr = next;
    this.render();
  }

  /** @param {PanelState} next */
  commit(next) {
    this.current = next;
    this.editing = null;
    this.render();
    this.onChange(structuredClone(next));
  }

  /** @param {string | null} what */
  edit(what) {
    this.editing = what;
    this.render();
  }

  /**
   * @param {string} initial
   * @param {(text: string) => void} save
   */
  editor(initial, save) {
    const tr = this.tr;
    const input = /** @type {HTMLTextAreaElement} */ (h("textarea", { className: "focus-edit", rows: 2, "aria-label": tr("focus.edit_label") }));
    input.value = initial;
    const done = () => {
      const text = input.value.trim();
      if (text) save(text);
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); done(); }
      if (event.key === "Escape") this.edit(null);
    });
    queueMicrotask(() => input.focus());
    return h("div", { className: "focus-editor" }, input,
      h("button", { type: "button", className: "focus-save", onclick: done }, tr("focus.save")),
      h("button", { type: "button", className: "focus-cancel", onclick: () => this.edit(null) }, tr("focus.cancel")));
  }

  goalSection() {
    const { current, tr } = this;
    const section = h("div", { className: "focus-goal" }, h("h3", {}, tr("focus.goal")));
    const core = current.core;
    if (this.editing === "core") {
      section.append(this.editor(core?.text ?? "", (text) =>
        this.commit({ ...current, core: { text, source_id: core?.source_id ?? null, edited: true } })));
    } else if (core) {
      section.append(h("p", { className: "focus-goal-text" }, core.text),
        h("div", { className: "focus-actions" },
          h("button", { type: "button", className: "focus-edit-button", onclick: () => this.edit("core") }, tr("focus.edit")),
          h("button", { type: "button", className: "focus-delete",
            onclick: () => this.commit({ ...current, core: null }) }, tr("focus.delete"))));
    } else {
      section.append(h("p", { className: "focus-empty" }, tr("focus.no_goal")),
        h("button", { type: "button", className: "focus-set-goal", onclick: () => this.edit("core") }, tr("focus.set_goal")));
    }
    return section;
  }

  /** @param {FocusItem} item */
  itemRow(item) {
    const { current, tr } = this;
    const row = h("li", { className: `focus-item${item.pinned ? " pinned" : ""}${item.conflicts_with.length ? " conflict" : ""}`,
      "data-id": item.id });
    /** @param {(item: FocusItem) => Partial<FocusItem>} change */
    const changeItem = (change) => this.commit({ ...current,
      evolving: current.evolving.map((other) => (other.id === item.id ? { ...other, ...change(other) } : other)) });
    if (this.editing === item.id) {
      row.append(this.editor(item.text, (text) => changeItem(() => ({ text, edited: true }))));
      return row;
    }
    row.append(h("span", { className: "focus-item-text" }, item.text));
    if (item.kind === "decision") row.append(h("span", { className: "focus-badge" }, tr("focus.decision")));
    if (item.source_id) row.append(h("span", { className: "focus-source" }, tr("focus.from_message", { id: item.source_id })));
    const byId = new Map(current.evolving.map((other) => [other.id, other]));
    for (const other of item.conflicts_with.flatMap((id) => byId.get(id) ?? [])) {
      row.append(h("p", { className: "focus-conflict", role: "note" }, `⚠ ${tr("focus.conflict", { text: other.text })}`));
    }
    const keepBoth = () => this.commit({ ...current, evolving: current.evolving.map((other) => (
      other.id === item.id ? { ...other, conflicts_with: [] }
        : { ...other, conflicts_with: other.conflicts_with.filter((id) => id !== item.id) })) });
    row.append(h("div", { className: "focus-actions" },
      h("button", { type: "button", className: "focus-pin", "aria-pressed": String(item.pinned),
        onclick: () => changeItem((other) => ({ pinned: !other.pinned })) }, item.pinned ? tr("focus.unpin") : tr("focus.pin")),
      h("button", { type: "button", className: "focus-edit-button", onclick: () => this.edit(item.id) }, tr("focus.edit")),
      h("button", { type: "button", className: "focus-delete",
        onclick: () => this.commit(withoutItem(current, item.id)) }, tr("focus.delete")),
      item.conflicts_with.length
        ? h("button", { type: "button", className: "focus-keep-both", onclick: keepBoth }, tr("focus.keep_both"))
        : null));
    return row;
  }

  constraintsSection() {
    const { current, tr } = this;
    const items = [...current.evolving.filter((i) => i.pinned), ...current.evolving.filter((i) => !i.pinned)];
    const list = h("ul", { className: "focus-items" });
    for (const item of items) list.append(this.itemRow(item));
    const input = /** @type {HTMLInputElement} */ (h("input", { type: "text", className: "focus-add-input",
      placeholder: tr("focus.add_placeholder"), "aria-label": tr("focus.add_placeholder") }));
    const add = () => {
      const text = input.value.trim();
      if (!text) return;
      this.commit({ ...current, evolving: [...current.evolving, { id: nextId(current.evolving), text, kind: "constraint",
        source_id: null, repeated_in: [], pinned: false, edited: true, conflicts_with: [] }] });
    };
    input.addEventListener("keydown", (event) => { if (event.key === "Enter") { event.preventDefault(); add(); } });
    return h("div", { className: "focus-constraints" }, h("h3", {}, tr("focus.constraints")),
      items.length ? list : h("p", { className: "focus-empty" }, tr("focus.no_constraints")),
      h("div", { className: "focus-add" }, input, h("button", { type: "button", className: "focus-add-button",
        onclick: add }, tr("focus.add"))));
  }

  footer() {
    const { status, prompt, tr } = this;
    const cost = this.current.cost ?? EMPTY.cost;
    const box = h("div", { className: "focus-footer" });
    let line = tr("focus.cost", { calls: cost.calls, input: cost.input_tokens.toLocaleString(),
      output: cost.output_tokens.toLocaleString() });
    if (cost.failures) line += ` · ${tr("focus.cost_failures", { failures: cost.failures })}`;
    box.append(h("p", { className: "focus-cost" }, line));
    if (status?.ok === false) {
      box.append(h("p", { className: "focus-status error", role: "status" }, tr("focus.last_failed", { error: status.error ?? "?" })));
    } else if (status?.classification) {
      box.append(h("p", { className: "focus-status", role: "status" }, tr("focus.last", {
        labels: status.classification.labels.join(", "), reason: status.classification.reason })));
    }
    if (prompt) {
      box.append(h("p", { className: "focus-prompt" }, tr("focus.prompt", { tokens: prompt.tokens, budget: prompt.budget })));
      if (prompt.over_budget) box.append(h("p", { className: "focus-over", role: "alert" }, tr("focus.over_budget")));
    }
    return box;
  }

  render() {
    const id = `focus-switch-${Math.random().toString(36).slice(2, 8)}`;
    const toggle = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", role: "switch", id,
      className: "focus-switch", checked: this.current.enabled, "aria-checked": String(Boolean(this.current.enabled)) }));
    toggle.addEventListener("change", () => this.commit({ ...this.current, enabled: toggle.checked }));
    const header = h("div", { className: "focus-header" }, toggle, h("label", { for: id }, this.tr("focus.switch")));
    const body = this.current.enabled
      ? [this.goalSection(), this.constraintsSection(), this.footer()]
      : [h("p", { className: "focus-off" }, this.tr("focus.off_hint"))];
    this.root.replaceChildren(header, ...body);
  }
}

/**
 * A copy of `state` to edit, or the empty state. The core writes every field of a focus state (pycore/focus/), so
 * what comes from it, or from the store that kept it, has them all.
 * @param {FocusState | null | undefined} state
 * @returns {PanelState}
 */
function stateOf(state) {
  return structuredClone(/** @type {PanelState | null | undefined} */ (state) ?? EMPTY);
}
