/**
 * The first run: a short card in the chat (provider, key, model, "Test connection") instead of the full
 * Settings dialog. The providers are the adapters' catalogue, known OpenAI-compatible services by name among
 * them (their address is the Base URL's placeholder); a server that may need no key marks the key optional. It shows while there is no profile; "Start chatting" makes one and puts the cursor in the
 * message box; "More settings" opens the dialog (profile names, a saved encrypted key, focus memory).
 *
 *   const card = new SetupCard({element, settings, ready, onDone})
 *   card.show() / card.hide();  card.render()   drawn again (a language change)
 *
 * "Test connection" asks the vendor for its models with the key typed (models.list, after the core is up):
 * it says how many there are and offers them in the Model field, or says what went wrong and what to do.
 */

import { VENDORS } from "../contract.js";
import { find, h } from "./dom.js";
import { messageOf } from "./error_notice.js";
import { onLanguageChange, t } from "./i18n.js";
import { vendorInfo, vendorLabel } from "./vendors.js";

export class SetupCard {
  /**
   * @param {{element: HTMLElement, settings: import("./settings.js").Settings, ready: Promise<unknown>,
   *   onDone?: () => void}} parts
   */
  constructor({ element, settings, ready, onDone = () => {} }) {
    onLanguageChange(() => this.element.hidden || this.render());
    this.element = element;
    this.settings = settings;
    this.ready = ready;
    this.onDone = onDone;
    this.values = { vendor: VENDORS[0].id, api_key: "", base_url: "", model: "" };
    /** @type {import("../types/contract").ModelEntry[]} */
    this.models = [];
    this.status = h("p", { id: "setup-status", className: "status-line", "aria-live": "polite" });
  }

  show() {
    this.render();
    this.element.hidden = false;
    find(this.element, "#setup-provider").focus();
  }

  hide() {
    this.element.hidden = true;
    this.element.replaceChildren(); // the typed key goes with the fields
    this.values.api_key = "";
  }

  render() {
    const v = this.values;
    const info = vendorInfo(v.vendor);
    /** @type {(id: string, label: string, input: HTMLElement, hint?: string | null) => HTMLElement} */
    const field = (id, label, input, hint) => {
      if (hint) input.setAttribute("aria-describedby", `${id}-hint`);
      return h("div", { className: "setup-field" }, h("label", { for: id }, label), input,
        hint ? h("small", { id: `${id}-hint`, className: "hint" }, hint) : null);
    };
    const provider = h("select", { id: "setup-provider" },
      ...VENDORS.map((vendor) => h("option", { value: vendor.id }, vendorLabel(vendor.id))));
    provider.value = v.vendor;
    provider.addEventListener("change", () => {
      v.vendor = provider.value;
      this.models = [];
      this.render();
      find(this.element, "#setup-provider").focus();
    });
    const key = h("input", { id: "setup-key", type: "password", autocomplete: "off", spellcheck: "false",
      value: v.api_key, required: info?.needs_key !== false });
    key.addEventListener("input", () => (v.api_key = key.value));
    const base = h("input", { id: "setup-base", type: "url", spellcheck: "false", value: v.base_url,
      placeholder: info?.default_base_url ?? "https://…/v1", required: Boolean(info?.needs_base_url) });
    base.addEventListener("input", () => (v.base_url = base.value));
    const model = h("input", { id: "setup-model", list: "setup-models", autocomplete: "off", spellcheck: "false",
      value: v.model, required: true });
    model.addEventListener("input", () => (v.model = model.value));
    const models = h("datalist", { id: "setup-models" },
      ...this.models.map((m) => h("option", { value: m.id }, m.name ?? m.id)));
    this.status = h("p", { id: "setup-status", className: "status-line", "aria-live": "polite" });
    const test = h("button", { type: "button", onclick: () => this.#test(test) }, t("setup.test"));
    const form = h("form", { className: "setup-form", noValidate: true }, // what is missing is said below
      field("setup-provider", t("settings.provider"), provider),
      // Every vendor takes a key; one whose server may need none (a local one) says it is optional.
      field("setup-key", t("settings.apiKey"), key, t(info?.needs_key === false ? "setup.keyOptional" : "setup.keyHint")),
      field("setup-base", t("settings.baseUrl"), base,
        info?.default_base_url ? t("setup.baseHint", { url: info.default_base_url }) : null),
      field("setup-model", t("settings.model"), model, this.models.length ? null : t("setup.modelHint")), models,
      this.status,
      h("div", { className: "setup-actions" }, test,
        h("button", { type: "submit", className: "primary" }, t("setup.start")),
        h("button", { type: "button", className: "link", onclick: () => this.settings.open() }, t("setup.more"))));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.#start();
    });
    this.element.replaceChildren(
      h("h2", { id: "setup-title" }, t("setup.title")),
      h("p", { className: "hint" }, t("setup.intro")),
      form);
  }

  /**
   * @param {string} text
   * @param {{error?: boolean}} [options]
   */
  #say(text, { error = false } = {}) {
    this.status.className = error ? "status-line error" : "status-line";
    this.status.textContent = text;
  }

  #provider() {
    const { vendor, api_key, base_url } = this.values;
    /** @type {{vendor: string, api_key?: string, base_url?: string}} */
    const provider = { vendor };
    if (api_key.trim()) provider.api_key = api_key.trim();
    if (base_url.trim()) provider.base_url = base_url.trim();
    return provider;
  }

  /**
   * What is missing before a request can be tried, as a sentence (its field gets the focus); null: nothing.
   * @param {{needModel: boolean}} options
   */
  #missing({ needModel }) {
    const info = vendorInfo(this.values.vendor);
    const lacking = (info?.needs_key !== false && !this.values.api_key.trim() && ["setup-key", "setup.needKey"])
      || (info?.needs_base_url && !this.values.base_url.trim() && ["setup-base", "settings.needBaseUrl"])
      || (needModel && !this.values.model.trim() && ["setup-model", "settings.needModel"]);
    if (!lacking) return null;
    const focusable = this.element.querySelector(`#${lacking[0]}`);
    if (focusable instanceof HTMLElement) focusable.focus();
    return t(lacking[1]);
  }

  /** @param {HTMLButtonElement} button */
  async #test(button) {
    const missing = this.#missing({ needModel: false });
    if (missing) return void this.#say(missing, { error: true });
    button.disabled = true;
    this.#say(t("setup.testing"));
    try {
      await this.ready;
      this.models = await this.settings.listModels(this.#provider());
      if (!this.values.model && this.models[0]) this.values.model = this.models[0].id;
      this.render();
      this.#say(t("setup.connected", { count: this.models.length, vendor: vendorLabel(this.values.vendor) }));
    } catch (err) {
      this.#say(t("setup.failed", { message: messageOf(err) }), { error: true });
    } finally {
      button.disabled = false;
    }
  }

  async #start() {
    const missing = this.#missing({ needModel: true });
    if (missing) return void this.#say(missing, { error: true });
    const { vendor, model } = this.values;
    const { api_key = "", base_url = "" } = this.#provider();
    await this.settings.addProfile({ vendor, api_key, base_url, model: model.trim() });
    this.hide();
    this.onDone();
  }
}
