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

const EMPTY = Object.freeze({ version: 1, enabled: false, core: null, evolving: [], turn: [], window: 3, seen: 0,
  cost: { calls: 0, failures: 0, input_tokens: 0, output_tokens: 0 } });

function nextId(evolving) {
  const numbers = evolving.map((item) => Number(item.id.slice(1))).filter(Number.isFinite);
  return `c${Math.max(0, ...numbers) + 1}`;
}

function withoutItem(state, id) {
  const evolving = state.evolving
    .filter((item) => item.id !== id)
    .map((item) => ({ ...item, conflicts_with: item.conflicts_with.filter((other) => other !== id) }));
  return { ...state, evolving };
}

export function mountFocusPanel(element, { state = null, onChange = () => {}, t = null } = {}) {
  let current = structuredClone(state ?? EMPTY);
  let tr = t ?? appT;
  let status = null;
  let prompt = null;
  let editing = null; // "core" or an item id
  const root = h("section", { className: "focus-panel" });
  element.append(root);

  function commit(next) {
    current = next;
    editing = null;
    render();
    onChange(structuredClone(next));
  }

  function editor(initial, save) {
    const input = h("textarea", { className: "focus-edit", rows: 2, "aria-label": tr("focus.edit_label") });
    input.value = initial;
    const done = () => {
      const text = input.value.trim();
      if (text) save(text);
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); done(); }
      if (event.key === "Escape") { editing = null; render(); }
    });
    queueMicrotask(() => input.focus());
    return h("div", { className: "focus-editor" }, input,
      h("button", { type: "button", className: "focus-save", onclick: done }, tr("focus.save")),
      h("button", { type: "button", className: "focus-cancel",
        onclick: () => { editing = null; render(); } }, tr("focus.cancel")));
  }

  function goalSection() {
    const section = h("div", { className: "focus-goal" }, h("h3", {}, tr("focus.goal")));
    const core = current.core;
    if (editing === "core") {
      section.append(editor(core?.text ?? "", (text) =>
        commit({ ...current, core: { text, source_id: core?.source_id ?? null, edited: true } })));
    } else if (core) {
      section.append(h("p", { className: "focus-goal-text" }, core.text),
        h("div", { className: "focus-actions" },
          h("button", { type: "button", className: "focus-edit-button",
            onclick: () => { editing = "core"; render(); } }, tr("focus.edit")),
          h("button", { type: "button", className: "focus-delete",
            onclick: () => commit({ ...current, core: null }) }, tr("focus.delete"))));
    } else {
      section.append(h("p", { className: "focus-empty" }, tr("focus.no_goal")),
        h("button", { type: "button", className: "focus-set-goal",
          onclick: () => { editing = "core"; render(); } }, tr("focus.set_goal")));
    }
    return section;
  }

  function itemRow(item) {
    const byId = new Map(current.evolving.map((other) => [other.id, other]));
    const row = h("li", { className: `focus-item${item.pinned ? " pinned" : ""}${item.conflicts_with.length ? " conflict" : ""}`,
      "data-id": item.id });
    if (editing === item.id) {
      row.append(editor(item.text, (text) => commit({ ...current,
        evolving: current.evolving.map((other) => (other.id === item.id ? { ...other, text, edited: true } : other)) })));
      return row;
    }
    row.append(h("span", { className: "focus-item-text" }, item.text));
    if (item.kind === "decision") row.append(h("span", { className: "focus-badge" }, tr("focus.decision")));
    if (item.source_id) row.append(h("span", { className: "focus-source" }, tr("focus.from_message", { id: item.source_id })));
    for (const otherId of item.conflicts_with) {
      const other = byId.get(otherId);
      if (!other) continue;
      row.append(h("p", { className: "focus-conflict", role: "note" }, `⚠ ${tr("focus.conflict", { text: other.text })}`));
    }
    const pin = () => commit({ ...current,
      evolving: current.evolving.map((other) => (other.id === item.id ? { ...other, pinned: !other.pinned } : other)) });
    const keepBoth = () => commit({ ...current, evolving: current.evolving.map((other) => (
      other.id === item.id ? { ...other, conflicts_with: [] }
        : { ...other, conflicts_with: other.conflicts_with.filter((id) => id !== item.id) })) });
    row.append(h("div", { className: "focus-actions" },
      h("button", { type: "button", className: "focus-pin", "aria-pressed": String(item.pinned),
        onclick: pin }, item.pinned ? tr("focus.unpin") : tr("focus.pin")),
      h("button", { type: "button", className: "focus-edit-button",
        onclick: () => { editing = item.id; render(); } }, tr("focus.edit")),
      h("button", { type: "button", className: "focus-delete",
        onclick: () => commit(withoutItem(current, item.id)) }, tr("focus.delete")),
      item.conflicts_with.length
        ? h("button", { type: "button", className: "focus-keep-both", onclick: keepBoth }, tr("focus.keep_both"))
        : null));
    return row;
  }

  function constraintsSection() {
    const items = [...current.evolving.filter((i) => i.pinned), ...current.evolving.filter((i) => !i.pinned)];
    const list = h("ul", { className: "focus-items" });
    for (const item of items) list.append(itemRow(item));
    const input = h("input", { type: "text", className: "focus-add-input", placeholder: tr("focus.add_placeholder"),
      "aria-label": tr("focus.add_placeholder") });
    const add = () => {
      const text = input.value.trim();
      if (!text) return;
      commit({ ...current, evolving: [...current.evolving, { id: nextId(current.evolving), text, kind: "constraint",
        source_id: null, repeated_in: [], pinned: false, edited: true, conflicts_with: [] }] });
    };
    input.addEventListener("keydown", (event) => { if (event.key === "Enter") { event.preventDefault(); add(); } });
    return h("div", { className: "focus-constraints" }, h("h3", {}, tr("focus.constraints")),
      items.length ? list : h("p", { className: "focus-empty" }, tr("focus.no_constraints")),
      h("div", { className: "focus-add" }, input, h("button", { type: "button", className: "focus-add-button",
        onclick: add }, tr("focus.add"))));
  }

  function footer() {
    const cost = current.cost ?? EMPTY.cost;
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

  function render() {
    const id = `focus-switch-${Math.random().toString(36).slice(2, 8)}`;
    const toggle = h("input", { type: "checkbox", role: "switch", id, className: "focus-switch",
      checked: current.enabled, "aria-checked": String(Boolean(current.enabled)) });
    toggle.addEventListener("change", () => commit({ ...current, enabled: toggle.checked }));
    const header = h("div", { className: "focus-header" }, toggle, h("label", { for: id }, tr("focus.switch")));
    const body = current.enabled
      ? [goalSection(), constraintsSection(), footer()]
      : [h("p", { className: "focus-off" }, tr("focus.off_hint"))];
    root.replaceChildren(header, ...body);
  }

  render();
  return {
    update(next) { current = structuredClone(next ?? EMPTY); editing = null; render(); },
    setStatus(result) { status = result; render(); },
    setPrompt(synthesis) { prompt = synthesis; render(); },
    setT(next) { tr = next; render(); },
    state() { return structuredClone(current); },
    destroy() { root.remove(); },
  };
}
