/**
 * Short messages at the bottom of the chat (errors, "deleted — Undo", import results).
 *
 *   notifier.show(text, {error?, action?: {label, run}, timeout? (ms; 0 = until dismissed), kind?})
 *   notifier.clear(kind)     the toasts of that kind go: their cause was fixed (e.g. "settings", once a profile is made)
 */

import { h } from "./dom.js";
import { t } from "./i18n.js";

/**
 * @typedef {{error?: boolean, action?: {label: string, run: () => unknown} | null, timeout?: number,
 *   kind?: string | null}} NoticeOptions
 * @typedef {(message: string, options?: NoticeOptions & {settings?: boolean}) => void} Notify
 *   the page's notify (web/main.js): a toast; `settings` adds "Open Settings"
 */

export class Notifier {
  /** @param {HTMLElement} container */
  constructor(container) {
    this.container = container;
  }

  /**
   * @param {string} text
   * @param {NoticeOptions} [options]
   */
  show(text, { error = false, action = null, timeout, kind = null } = {}) {
    if (kind) this.clear(kind); // one toast of a kind: the newest says it
    const toast = h("div", { className: `toast${error ? " error" : ""}`, role: error ? "alert" : null,
                             dataset: kind ? { kind } : {} });
    const close = () => toast.remove();
    toast.append(h("span", { className: "toast-text" }, text));
    if (action) {
      toast.append(h("button", { type: "button", onclick: async () => {
        close();
        await action.run();
      } }, action.label));
    }
    toast.append(h("button", { type: "button", className: "icon", "aria-label": t("notice.dismiss"), onclick: close }, "×"));
    this.container.append(toast);
    const ms = timeout ?? (error ? 0 : 6000);
    if (ms) setTimeout(close, ms);
    return toast;
  }

  /** @param {string} kind */
  clear(kind) {
    for (const toast of this.container.querySelectorAll(".toast")) {
      if (toast instanceof HTMLElement && toast.dataset.kind === kind) toast.remove();
    }
  }
}
