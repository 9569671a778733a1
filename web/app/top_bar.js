/**
 * The top bar: the profile and model the next reply goes to (switched at any time, mid-conversation),
 * the Focus, Tools and Settings buttons, and at phone width the button that slides the conversations in.
 *
 *   const bar = new TopBar({settings, core, coreReadyNow, ready, notify, openTools, onProfile})
 *   bar.showProfiles()   the profiles and the active one again (after any change in Settings)
 *
 * `onProfile(active | null)` is told each time, for what follows the profile elsewhere.
 */

import { byId, find, h } from "./dom.js";
import { messageOf } from "./error_notice.js";
import { ModelSuggestions } from "./model_switch.js";
import { PREFS, prefs } from "../store/prefs.js";

export class TopBar {
  /**
   * @param {{settings: import("./settings.js").Settings, core: import("../client/orizuru.js").Agent,
   *   coreReadyNow: () => boolean, ready: Promise<unknown>, notify: import("./notify.js").Notify,
   *   openTools: () => void, onProfile?: (active: import("./bus.js").Profile | null) => void}} parts
   */
  constructor({ settings, core, coreReadyNow, ready, notify, openTools, onProfile = () => {} }) {
    this.settings = settings;
    this.onProfile = onProfile;
    this.profileSwitch = byId("profile-switch", HTMLSelectElement);
    this.modelSwitch = byId("model-switch", HTMLInputElement);
    this.suggestions = new ModelSuggestions({ list: byId("model-switch-list"), core, coreReadyNow,
                                              target: () => settings.target() });
    ready.then(() => this.suggestions.refresh(), () => {});
    this.modelSwitch.addEventListener("focus", () => this.suggestions.refresh());
    this.profileSwitch.addEventListener("change", () => settings.switchTo(this.profileSwitch.value));
    this.modelSwitch.addEventListener("change", () =>
      settings.setModel(this.modelSwitch.value.trim()).catch((e) => notify(messageOf(e))));
    byId("open-settings").addEventListener("click", () => settings.open());
    byId("open-tools").addEventListener("click", () => openTools());
    this.#focusToggle();
    this.#sidebarToggle();
  }

  showProfiles() {
    const active = this.settings.active;
    this.profileSwitch.replaceChildren(...this.settings.profiles.map((p) => h("option", { value: p.id }, p.name || p.model)));
    this.profileSwitch.hidden = this.settings.profiles.length === 0;
    this.modelSwitch.hidden = !active;
    if (active) {
      this.profileSwitch.value = active.id;
      this.modelSwitch.value = active.model ?? "";
    }
    this.suggestions.show(active);
    this.onProfile(active);
  }

  /** The Focus panel is closed until the user opens it; open or closed, the choice is remembered. */
  #focusToggle() {
    const toggle = byId("toggle-focus");
    /** @param {boolean} open */
    const show = (open) => {
      document.body.classList.toggle("focus-open", open);
      toggle.setAttribute("aria-expanded", String(open));
    };
    show(prefs.get(PREFS.focusPanel) === "open");
    toggle.addEventListener("click", (ev) => {
      ev.stopPropagation();
      const open = !document.body.classList.contains("focus-open");
      show(open);
      prefs.set(PREFS.focusPanel, open ? "open" : "closed");
    });
  }

  /** Phone width: the sidebar slides over the chat; a tap outside it or Esc puts it away. Opened, the focus
   *  goes into it (it comes after the chat in Tab order); put away by Esc, the focus comes back to ☰. */
  #sidebarToggle() {
    const toggle = byId("toggle-sidebar");
    const sidebar = byId("sidebar");
    toggle.addEventListener("click", (ev) => {
      ev.stopPropagation();
      if (document.body.classList.toggle("sidebar-open")) byId("new-chat").focus();
    });
    const close = () => document.body.classList.remove("sidebar-open");
    find(document, ".main").addEventListener("click", close);
    document.addEventListener("keydown", (ev) => {
      if (ev.key !== "Escape" || !document.body.classList.contains("sidebar-open")) return;
      const inside = sidebar.contains(document.activeElement);
      close();
      if (inside) toggle.focus();
    });
    byId("skip-to-message").addEventListener("click", () => byId("message").focus());
  }
}
