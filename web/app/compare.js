/**
 * Compare: one message to 2–4 models at once, their replies side by side (#35).
 *
 *   const picker = new ComparePicker({button, panel, profiles: () => settings.profiles, active: () => settings.active})
 *   picker.choices()      null when Compare is off; else the chosen {profileId, model, label}[] (2–4), or throws an
 *                         Error saying what to choose
 *   picker.refresh()      the profiles again (Settings changed them)
 *
 *   const view = new CompareView({labels, onStop, onPick, onMerge})   the turn's replies, one column each
 *   view.columns[i].body  where column i's reply is drawn · view.ended(i) its Stop goes
 *   view.finish(picked)   the turn is over: "Continue with this reply" on each column that has one, and "Merge"
 *
 * The columns sit side by side on a desktop and scroll one by one (scroll snap) on a phone. The chat (chat.js)
 * runs each column's chat.run on its own and stores each reply as a branch of the one message; the user's pick
 * (or the merged answer) becomes the branch the conversation continues on.
 */

import { h } from "./dom.js";
import { onLanguageChange, t } from "./i18n.js";

/** @typedef {{profileId: string, model: string, label: string}} CompareChoice */
/** @typedef {{id: string, name?: string | null, model?: string | null}} CompareProfile */

export const COMPARE_MIN = 2;
export const COMPARE_MAX = 4;

export class ComparePicker {
  /**
   * @param {{button: HTMLButtonElement, panel: HTMLElement, profiles: () => CompareProfile[],
   *   active: () => CompareProfile | null}} parts
   */
  constructor({ button, panel, profiles, active }) {
    this.button = button;
    this.panel = panel;
    this.profiles = profiles;
    this.active = active;
    /** @type {Map<string, {box: HTMLInputElement, model: HTMLInputElement, profile: CompareProfile}>} */
    this.rows = new Map();
    button.addEventListener("click", () => this.toggle());
    this.panel.hidden = true;
    onLanguageChange(() => this.refresh());
  }

  get open() {
    return !this.panel.hidden;
  }

  toggle(open = !this.open) {
    this.panel.hidden = !open;
    this.button.setAttribute("aria-pressed", String(open));
    if (open) this.refresh();
  }

  /** The profiles, as checkboxes with each one's model (the active one ticked at first); ticks kept across redraws. */
  refresh() {
    if (!this.open) return;
    const ticked = new Set([...this.rows].filter(([, row]) => row.box.checked).map(([id]) => id));
    if (!this.rows.size && this.active()) ticked.add(/** @type {CompareProfile} */ (this.active()).id);
    this.rows.clear();
    const items = this.profiles().map((profile) => {
      const box = h("input", { type: "checkbox", checked: ticked.has(profile.id), onchange: () => this.#limit() });
      const model = h("input", { type: "text", className: "compare-model", value: profile.model ?? "",
                                 "aria-label": t("compare.modelOf", { name: profile.name || profile.model || "" }) });
      this.rows.set(profile.id, { box, model, profile });
      return h("li", {}, h("label", {}, box, " ", profile.name || profile.model || ""), model);
    });
    this.panel.replaceChildren(h("fieldset", {},
      h("legend", {}, t("compare.legend")),
      h("p", { className: "hint" }, t("compare.hint", { min: COMPARE_MIN, max: COMPARE_MAX })),
      h("ul", { className: "compare-choices" }, items)));
    this.#limit();
  }

  /** At most COMPARE_MAX ticked: the others are off until one is unticked. */
  #limit() {
    const full = [...this.rows.values()].filter((row) => row.box.checked).length >= COMPARE_MAX;
    for (const row of this.rows.values()) row.box.disabled = full && !row.box.checked;
  }

  /** @returns {CompareChoice[] | null} */
  choices() {
    if (!this.open) return null;
    const chosen = [...this.rows.values()].filter((row) => row.box.checked).map(({ model, profile }) => {
      const name = model.value.trim() || profile.model || "";
      const title = profile.name || name; // a profile named after its model is not named twice
      return { profileId: profile.id, model: name, label: title.includes(name) ? title : `${title} · ${name}` };
    });
    if (chosen.length < COMPARE_MIN) throw new Error(t("compare.chooseMore", { min: COMPARE_MIN, max: COMPARE_MAX }));
    return chosen;
  }
}

export class CompareView {
  /**
   * @param {{labels: string[], onStop: (i: number) => void, onPick: (i: number) => void,
   *   onMerge: (i: number) => void}} parts
   */
  constructor({ labels, onStop, onPick, onMerge }) {
    this.labels = labels;
    this.onPick = onPick;
    this.onMerge = onMerge;
    this.columns = labels.map((label, i) => {
      const stop = h("button", { type: "button", className: "danger compare-stop",
                                 "aria-label": t("compare.stopOne", { model: label }), onclick: () => onStop(i) },
                     t("chat.stop"));
      const body = h("ul", { className: "compare-reply" });
      const actions = h("div", { className: "compare-actions" });
      const el = h("section", { className: "compare-column", "aria-label": label },
        h("header", {}, h("h3", {}, label), stop), body, actions);
      return { el, stop, body, actions };
    });
    this.merge = h("div", { className: "compare-merge", hidden: true });
    this.el = h("li", { className: "compare", role: "group", "aria-label": t("compare.group", { count: labels.length }) },
      h("div", { className: "compare-columns" }, this.columns.map((c) => c.el)), this.merge);
  }

  /** @param {number} i   column i's run is over: its Stop goes */
  ended(i) {
    this.columns[i].stop.hidden = true;
  }

  /**
   * The turn is over: each column with a stored reply can continue the conversation, and any model can merge them.
   * @param {boolean[]} usable   which columns have a reply to pick
   */
  finish(usable) {
    this.columns.forEach((column, i) => {
      column.stop.hidden = true;
      if (!usable[i]) return;
      column.actions.replaceChildren(h("button", { type: "button", className: "primary compare-pick",
                                                   "aria-label": t("compare.pickOne", { model: this.labels[i] }),
                                                   onclick: () => this.onPick(i) }, t("compare.pick")));
    });
    if (usable.filter(Boolean).length < COMPARE_MIN) return;
    const select = h("select", { "aria-label": t("compare.mergeWith") },
      this.labels.map((label, i) => h("option", { value: String(i) }, label)));
    this.merge.replaceChildren(h("label", {}, t("compare.mergeWith"), " ", select),
      h("button", { type: "button", className: "compare-merge-go", onclick: () => this.onMerge(Number(select.value)) },
        t("compare.merge")));
    this.merge.hidden = false;
  }
}

/**
 * The request that merges the replies: the conversation up to the message, which gets the replies and what to do
 * with them. Only the vendor sees this; the transcript keeps the person's message as they wrote it.
 * @param {import("../types/contract").Message[]} messages   the path as sent, ending in the person's message
 * @param {{label: string, text: string}[]} replies
 * @returns {import("../types/contract").Message[]}
 */
export function mergeRequest(messages, replies) {
  const answers = replies.map((r, i) => `<answer ${i + 1}: ${r.label}>\n${r.text}\n</answer ${i + 1}>`).join("\n\n");
  const last = messages[messages.length - 1];
  /** @type {import("../types/contract").Part} */
  const ask = { type: "text", text: `${MERGE_PROMPT}\n\n${answers}` };
  return [...messages.slice(0, -1), { ...last, parts: [...(last.parts ?? []), ask] }];
}

const MERGE_PROMPT = "Several assistants answered the message above; their answers follow. Write one answer to the " +
  "message that keeps what is right and useful in each, drops what is wrong, and settles where they disagree. Reply " +
  "with that answer only, in the language of the message, without naming the assistants.";
