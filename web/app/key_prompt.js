/**
 * Asks for the API key a profile needs before a message goes out, when this tab does not hold it (a
 * key kept in memory only is gone after a reload): the key itself, or the passphrase of the saved
 * (encrypted) one. The message waits in the box meanwhile; nothing is sent without the key.
 *
 *   const prompt = new KeyPrompt({settings, openSettings})
 *   await prompt.ask(profile) -> true once this tab holds the key, false when the person cancelled
 *                                (or went to Settings instead)
 */

import { h } from "./dom.js";
import { messageOf } from "./error_notice.js";
import { t } from "./i18n.js";

export class KeyPrompt {
  /** @param {{settings: import("./settings.js").Settings, openSettings: () => void}} parts */
  constructor({ settings, openSettings }) {
    this.settings = settings;
    this.openSettings = openSettings;
  }

  /**
   * @param {import("./bus.js").Profile} profile
   * @returns {Promise<boolean>} whether the key is now there
   */
  ask(profile) {
    const sealed = Boolean(profile.key);
    const name = profile.name || profile.model;
    const field = h("input", { id: "key-prompt-field", type: "password", autocomplete: "off", spellcheck: "false",
                               required: true });
    const status = h("p", { className: "status-line error", "aria-live": "polite" });
    const send = h("button", { type: "submit", className: "primary" }, t("chat.send"));
    const form = h("form", { className: "dialog-body", method: "dialog" },
      h("h2", { id: "key-prompt-title" }, t("keyPrompt.title")),
      h("p", { className: "hint" }, t(sealed ? "keyPrompt.sealed" : "keyPrompt.memory", { profile: name })),
      h("div", { className: "row" },
        h("label", { for: field.id }, t(sealed ? "settings.passphrase" : "settings.apiKey")), field),
      status,
      h("div", { className: "dialog-actions" }, send,
        h("button", { type: "button", onclick: () => finish(false, true) }, t("top.openSettings")),
        h("button", { type: "button", onclick: () => finish(false) }, t("chat.cancel"))));
    const dialog = h("dialog", { className: "key-prompt", "aria-labelledby": "key-prompt-title" }, form);
    document.body.append(dialog);

    /** @type {(ok: boolean) => void} */
    let resolve = () => {};
    /** @type {Promise<boolean>} */
    const answer = new Promise((ok) => (resolve = ok));
    /** @type {(ok: boolean, toSettings?: boolean) => void} */
    const finish = (ok, toSettings = false) => {
      dialog.close();
      dialog.remove();
      resolve(ok);
      if (toSettings) this.openSettings();
    };
    dialog.addEventListener("cancel", () => finish(false)); // Esc
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      send.disabled = true;
      status.textContent = "";
      try {
        await this.settings.provideKey(profile, sealed ? { passphrase: field.value } : { key: field.value });
        finish(true);
      } catch (err) {
        status.textContent = sealed ? t("settings.wrongPassphrase") : messageOf(err);
        send.disabled = false;
        field.focus();
      }
    });
    dialog.showModal();
    field.focus();
    return answer;
  }
}
