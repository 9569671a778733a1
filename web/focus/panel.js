/**
 * The focus memory panel: the "Focus memory" switch, the goal and the constraints (each editable,
 * pinnable, deletable), contradiction flags, and what the classifier has cost.
 *
 *   import { mountFocusPanel } from "../focus/panel.js";      // + web/focus/panel.css
 *   const panel = mountFocusPanel(element, {
 *     state,                  // the conversation's focus state (focus.update's "state"), or null
 *     onChange(newState) {},  // every user edit: store it (store.setFocus) and send it next turn
 *     t,                      // optional: (key, vars) => text; default focusT(<html lang>)
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

import { focusT } from "./strings.js";

const EMPTY = Object.freeze({ version: 1, enabled: false, core: null, evolving: [], turn: [], window: 3, seen: 0,
  cost: { calls: 0, failures: 0, input_tokens: 0, output_tokens: 0 } });

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

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
  let tr = t ?? focusT(document.documentElement.lang?.startsWith("ja") ? "ja" : "en");
  let status = null;
  let prompt = null;
  let editing = null; // "core" or an item id
  const root = el("section", { class: "focus-panel" });
  element.append(root);

  function commit(next) {
    current = next;
    editing = null;
    render();
    onChange(structuredClone(next));
  }

  function editor(initial, save) {
    const input = el("textarea", { class: "focus-edit", rows: 2, "aria-label": tr("focus.edit_label") });
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
    return el("div", { class: "focus-editor" }, input,
      el("button", { type: "button", class: "focus-save", text: tr("focus.save"), onclick: done }),
      el("button", { type: "button", class: "focus-cancel", text: tr("focus.cancel"),
        onclick: () => { editing = null; render(); } }));
  }

  function goalSection() {
    const section = el("div", { class: "focus-goal" }, el("h3", { text: tr("focus.goal") }));
    const core = current.core;
    if (editing === "core") {
      section.append(editor(core?.text ?? "", (text) =>
        commit({ ...current, core: { text, source_id: core?.source_id ?? null, edited: true } })));
    } else if (core) {
      section.append(el("p", { class: "focus-goal-text", text: core.text }),
        el("div", { class: "focus-actions" },
          el("button", { type: "button", class: "focus-edit-button", text: tr("focus.edit"),
            onclick: () => { editing = "core"; render(); } }),
          el("button", { type: "button", class: "focus-delete", text: tr("focus.delete"),
            onclick: () => commit({ ...current, core: null }) })));
    } else {
      section.append(el("p", { class: "focus-empty", text: tr("focus.no_goal") }),
        el("button", { type: "button", class: "focus-set-goal", text: tr("focus.set_goal"),
          onclick: () => { editing = "core"; render(); } }));
    }
    return section;
  }

  function itemRow(item) {
    const byId = new Map(current.evolving.map((other) => [other.id, other]));
    const row = el("li", { class: `focus-item${item.pinned ? " pinned" : ""}${item.conflicts_with.length ? " conflict" : ""}`,
      "data-id": item.id });
    if (editing === item.id) {
      row.append(editor(item.text, (text) => commit({ ...current,
        evolving: current.evolving.map((other) => (other.id === item.id ? { ...other, text, edited: true } : other)) })));
      return row;
    }
    row.append(el("span", { class: "focus-item-text", text: item.text }));
    if (item.kind === "decision") row.append(el("span", { class: "focus-badge", text: tr("focus.decision") }));
    if (item.source_id) row.append(el("span", { class: "focus-source", text: tr("focus.from_message", { id: item.source_id }) }));
    for (const otherId of item.conflicts_with) {
      const other = byId.get(otherId);
      if (!other) continue;
      row.append(el("p", { class: "focus-conflict", role: "note", text: `⚠ ${tr("focus.conflict", { text: other.text })}` }));
    }
    const pin = () => commit({ ...current,
      evolving: current.evolving.map((other) => (other.id === item.id ? { ...other, pinned: !other.pinned } : other)) });
    const keepBoth = () => commit({ ...current, evolving: current.evolving.map((other) => (
      other.id === item.id ? { ...other, conflicts_with: [] }
        : { ...other, conflicts_with: other.conflicts_with.filter((id) => id !== item.id) })) });
    row.append(el("div", { class: "focus-actions" },
      el("button", { type: "button", class: "focus-pin", "aria-pressed": String(item.pinned),
        text: item.pinned ? tr("focus.unpin") : tr("focus.pin"), onclick: pin }),
      el("button", { type: "button", class: "focus-edit-button", text: tr("focus.edit"),
        onclick: () => { editing = item.id; render(); } }),
      el("button", { type: "button", class: "focus-delete", text: tr("focus.delete"),
        onclick: () => commit(withoutItem(current, item.id)) }),
      item.conflicts_with.length
        ? el("button", { type: "button", class: "focus-keep-both", text: tr("focus.keep_both"), onclick: keepBoth })
        : null));
    return row;
  }

  function constraintsSection() {
    const items = [...current.evolving.filter((i) => i.pinned), ...current.evolving.filter((i) => !i.pinned)];
    const list = el("ul", { class: "focus-items" });
    for (const item of items) list.append(itemRow(item));
    const input = el("input", { type: "text", class: "focus-add-input", placeholder: tr("focus.add_placeholder"),
      "aria-label": tr("focus.add_placeholder") });
    const add = () => {
      const text = input.value.trim();
      if (!text) return;
      commit({ ...current, evolving: [...current.evolving, { id: nextId(current.evolving), text, kind: "constraint",
        source_id: null, repeated_in: [], pinned: false, edited: true, conflicts_with: [] }] });
    };
    input.addEventListener("keydown", (event) => { if (event.key === "Enter") { event.preventDefault(); add(); } });
    return el("div", { class: "focus-constraints" }, el("h3", { text: tr("focus.constraints") }),
      items.length ? list : el("p", { class: "focus-empty", text: tr("focus.no_constraints") }),
      el("div", { class: "focus-add" }, input, el("button", { type: "button", class: "focus-add-button",
        text: tr("focus.add"), onclick: add })));
  }

  function footer() {
    const cost = current.cost ?? EMPTY.cost;
    const box = el("div", { class: "focus-footer" });
    let line = tr("focus.cost", { calls: cost.calls, input: cost.input_tokens.toLocaleString(),
      output: cost.output_tokens.toLocaleString() });
    if (cost.failures) line += ` · ${tr("focus.cost_failures", { failures: cost.failures })}`;
    box.append(el("p", { class: "focus-cost", text: line }));
    if (status?.ok === false) {
      box.append(el("p", { class: "focus-status error", role: "status", text: tr("focus.last_failed", { error: status.error ?? "?" }) }));
    } else if (status?.classification) {
      box.append(el("p", { class: "focus-status", role: "status", text: tr("focus.last", {
        labels: status.classification.labels.join(", "), reason: status.classification.reason }) }));
    }
    if (prompt) {
      box.append(el("p", { class: "focus-prompt", text: tr("focus.prompt", { tokens: prompt.tokens, budget: prompt.budget }) }));
      if (prompt.over_budget) box.append(el("p", { class: "focus-over", role: "alert", text: tr("focus.over_budget") }));
    }
    return box;
  }

  function render() {
    const id = `focus-switch-${Math.random().toString(36).slice(2, 8)}`;
    const toggle = el("input", { type: "checkbox", role: "switch", id, class: "focus-switch",
      checked: current.enabled, "aria-checked": String(Boolean(current.enabled)) });
    toggle.addEventListener("change", () => commit({ ...current, enabled: toggle.checked }));
    const header = el("div", { class: "focus-header" }, toggle, el("label", { for: id, text: tr("focus.switch") }));
    const body = current.enabled
      ? [goalSection(), constraintsSection(), footer()]
      : [el("p", { class: "focus-off", text: tr("focus.off_hint") })];
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
