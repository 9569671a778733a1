/**
 * The top bar's model field: free text, with the vendor's models as suggestions (its <datalist>).
 *
 *   const suggestions = new ModelSuggestions({ list, core, coreReadyNow, target: () => settings.target() });
 *   suggestions.show(profile)   // the active profile, or its model, changed
 *   suggestions.refresh()       // try again for the shown profile: the core is ready, or its key is at hand now
 *
 * The list comes from the core's models.list for the active profile (when the core offers that method),
 * asked once per profile, vendor and base URL in a page; the profile's current model is always among
 * the suggestions. Without a list (no key in this tab yet, a vendor that does not list its models or
 * refuses) the current model is the only suggestion; any other name can still be typed.
 */
import { h } from "./dom.js";

/** @typedef {import("./bus.js").Profile} Profile */

/** @param {Profile} profile */
const keyOf = (profile) => `${profile.id}\n${profile.vendor}\n${profile.base_url ?? ""}`;

export class ModelSuggestions {
  /** @type {HTMLElement} */
  #list;
  /** @type {import("../client/orizuru.js").Agent} */
  #core;
  /** @type {() => boolean} */
  #coreReadyNow;
  /** @type {() => import("./settings.js").Target} */
  #target;
  /** @type {Profile | null} */
  #profile = null;
  /** @type {Map<string, Promise<string[] | null>>} */
  #lists = new Map(); // keyOf(profile) -> Promise<string[] | null> (null: the vendor gave no list)
  /** @type {Set<string>} */
  #failed = new Set(); // keys whose list failed since the last show(): not asked again on each focus

  /**
   * @param {{list: HTMLElement, core: import("../client/orizuru.js").Agent, coreReadyNow: () => boolean,
   *   target: () => import("./settings.js").Target}} parts
   */
  constructor({ list, core, coreReadyNow, target }) {
    this.#list = list;
    this.#core = core;
    this.#coreReadyNow = coreReadyNow;
    this.#target = target;
  }

  /** @param {Profile | null | undefined} profile */
  show(profile) {
    this.#profile = profile ?? null;
    this.#failed.clear();
    this.#fill(this.#profile ? [] : null);
    this.refresh();
  }

  async refresh() {
    const profile = this.#profile;
    if (!profile) return;
    const key = keyOf(profile);
    if (this.#failed.has(key)) return;
    let list = this.#lists.get(key);
    if (!list) {
      if (!this.#coreReadyNow() || !this.#core.methods?.includes("models.list")) return;
      let provider;
      try {
        ({ provider } = this.#target());
      } catch {
        return; // no key in this tab yet: asked again when the field is used
      }
      list = this.#core.call("models.list", { provider }).then(
        (/** @type {import("../types/contract").Result<"models.list">} */ { models }) => models.map((m) => String(m.id)),
        () => null);
      this.#lists.set(key, list);
    }
    const ids = await list;
    if (ids === null) {
      this.#lists.delete(key);
      this.#failed.add(key);
    }
    if (this.#profile === profile) this.#fill(ids ?? []);
  }

  /** @param {string[] | null} ids */
  #fill(ids) {
    const names = ids === null ? [] : [...new Set([this.#profile?.model, ...ids].filter(Boolean))];
    this.#list.replaceChildren(...names.map((name) => h("option", { value: name })));
  }
}
