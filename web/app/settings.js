/**
 * Settings: provider profiles (vendor, base URL, model, name) and their API keys.
 *
 *   const settings = new Settings({core, coreReadyNow, profiles, keys, onChange, notify})
 *   await settings.load()            saved profiles; the last one used becomes active
 *   settings.open({field?, vendor?, model?})   the dialog (a first run starts from the setup card: first_run.js);
 *                                    after a failed reply, on the profile that failed with `field` focused
 *   await settings.addProfile({vendor, api_key?, base_url?, model, name?})   a new profile, made active
 *   await settings.listModels(provider) -> [{id, name?}]   the vendor's models for that key (models.list)
 *   settings.target()                {provider: {vendor, api_key?, base_url?}, vendor, model} for the next
 *                                    turn, or throws an Error that says what is missing (a MissingKeyError
 *                                    when only this tab's copy of the key is: see provideKey)
 *   await settings.provideKey(profile, {key} | {passphrase})   that key, typed again or unlocked, for this tab
 *   settings.switchTo(id) / settings.setModel(name)   the top bar's quick switches (mid-conversation)
 *   settings.active                  the active profile (no key inside)
 *   settings.classifierFor(target)   {provider, model} for focus memory's classifier: the profile and
 *                                    model chosen in Settings, by default the conversation's own (target)
 *
 * Keys live in `this.keys` (memory, this tab) by default. Only when the user ticks "save" is the key
 * written, and then only as an encrypted record (web/store/keys.js, passphrase + WebCrypto). A plain
 * key is never put in a profile, localStorage, IndexedDB, a transcript or a message. A profile that
 * was given a key says so (`uses_key`), so after a reload it is asked for again even for a vendor
 * that could be sent a request without one.
 */

import { VENDORS as CATALOGUE } from "../contract.js";
import { byId, h } from "./dom.js";
import { messageOf } from "./error_notice.js";
import { onLanguageChange, t } from "./i18n.js";
import { vendorInfo, vendorLabel } from "./vendors.js";
import { PREFS, prefs } from "../store/prefs.js";

/**
 * @typedef {Awaited<ReturnType<typeof import("../store/keys.js").encryptSecret>>} KeyRecord
 * @typedef {{id: string, name: string, vendor: string, base_url?: string | null, model: string | null,
 *   key?: KeyRecord | null, uses_key?: boolean, updated?: number, python_tools?: string}} Profile
 *   a provider profile as Settings holds it: the stored record (store/profiles.js) and the active one's Python
 *   tools (kept as a preference); never a plain key
 * @typedef {{vendor: string, api_key?: string, base_url?: string}} Provider   chat.run's provider
 * @typedef {{provider: Provider, model: string, vendor: string, wireVendor: string}} Target   the next turn's
 */

/** The vendors to pick from, as the core's adapters declare them (pycore.adapters.catalogue()). */
export const VENDORS = CATALOGUE.map((v) => v.id);

/** The profile needs a key this tab does not hold: `sealed` when a saved (encrypted) one can be unlocked. */
export class MissingKeyError extends Error {
  /** @param {Profile} profile */
  constructor(profile) {
    super(t(profile.key ? "chat.needKey" : "chat.noKey"));
    this.name = "MissingKeyError";
    this.profile = profile;
    this.sealed = Boolean(profile.key);
  }
}
// Kept as preferences (web/store/prefs.js): the active profile; each profile's Python tools (source code, not
// a secret: the profile store keeps only its own fields); focus memory's classifier {profile: id | "" (the
// conversation's own), model: name | "" (the profile's)}: ids and names only, the key is looked up when used.

export class Settings {
  /**
   * @param {{core: import("../client/orizuru.js").Agent, coreReadyNow: () => boolean,
   *   profiles: import("../store/profiles.js").Profiles, keys: typeof import("../store/keys.js"),
   *   onChange?: (profile: Profile | null) => void, notify?: import("./notify.js").Notify}} parts
   */
  constructor({ core, coreReadyNow, profiles, keys, onChange = () => {}, notify = () => {} }) {
    onLanguageChange(() => this.relabel());
    this.core = core;
    this.coreReadyNow = coreReadyNow;
    this.profilesApi = profiles;
    this.keysApi = keys;
    this.onChange = onChange;
    this.notify = notify;
    /** @type {Profile[]} */
    this.profiles = [];
    this.keys = keys.sessionKeys; // profile id -> plain API key, this tab only (redacted from anything written)
    /** @type {Profile | null} */
    this.active = null;
    this.dialog = byId("settings-dialog", HTMLDialogElement);
    this.form = byId("settings-form", HTMLFormElement);
    this.f = {
      "profile-choice": byId("profile-choice", HTMLSelectElement), "profile-name": byId("profile-name", HTMLInputElement),
      provider: byId("provider", HTMLSelectElement), "api-key": byId("api-key", HTMLInputElement),
      "base-url": byId("base-url", HTMLInputElement), model: byId("model", HTMLInputElement),
      "model-list": byId("model-list"), "models-status": byId("models-status"),
      "remember-key": byId("remember-key", HTMLInputElement), passphrase: byId("passphrase", HTMLInputElement),
      "unlock-row": byId("unlock-row"), "unlock-passphrase": byId("unlock-passphrase", HTMLInputElement),
      "saved-key-row": byId("saved-key-row"), "settings-status": byId("settings-status"),
      "remember-row": byId("remember-row"),
    };
    /** @type {Profile | null} */
    this.editing = null; // the profile shown in the form (null: a new one)
    this.classifierProfile = byId("classifier-profile", HTMLSelectElement);
    this.classifierModel = byId("classifier-model", HTMLInputElement);
    this.#wire();
  }

  #wire() {
    const f = this.f;
    f.provider.replaceChildren(...VENDORS.map((v) => h("option", { value: v, dataset: { vendor: v } }, vendorLabel(v))));
    f["profile-choice"].addEventListener("change", () => this.#edit(this.#byId(f["profile-choice"].value)));
    byId("new-profile").addEventListener("click", () => this.#edit(null));
    byId("delete-profile").addEventListener("click", () => this.#deleteEditing());
    byId("load-models").addEventListener("click", () => this.loadModels());
    byId("unlock-key").addEventListener("click", () => this.#unlock());
    byId("forget-key").addEventListener("click", () => this.#forgetKey());
    byId("settings-close").addEventListener("click", () => this.dialog.close());
    f["remember-key"].addEventListener("change", () => (f.passphrase.disabled = !f["remember-key"].checked));
    f.provider.addEventListener("change", () => this.#providerChanged());
    const saveClassifier = () => prefs.setJSON(PREFS.classifier, {
      profile: this.classifierProfile.value, model: this.classifierModel.value.trim() });
    this.classifierProfile.addEventListener("change", saveClassifier);
    this.classifierModel.addEventListener("change", saveClassifier);
    this.form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.#save();
    });
  }

  relabel() {
    for (const option of this.f.provider.options) option.textContent = vendorLabel(option.value);
    this.#fillChoice();
  }

  async load() {
    this.profiles = await this.profilesApi.list();
    const wanted = prefs.get(PREFS.activeProfile);
    this.activate(this.#byId(wanted) ?? this.profiles[0] ?? null);
    if (this.dialog.open) this.#fillChoice(); // read again (sync brought profiles): the open form lists them
    return this.active;
  }

  /** @param {string | null} id */
  #byId(id) {
    return this.profiles.find((p) => p.id === id) ?? null;
  }

  /**
   * The dialog. From a failed reply: `vendor` and `model` are the reply's, so the profile that failed is shown
   * (the active one when it matches), and `field` ("api-key", "model") gets the focus, the fix being typed there.
   */
  /** @param {{field?: string | null, vendor?: string | null, model?: string | null}} [at] */
  open({ field = null, vendor = null, model = null } = {}) {
    this.f["settings-status"].textContent = "";
    this.#edit(this.#profileOf(vendor, model) ?? this.active);
    if (!this.dialog.open) this.dialog.showModal();
    /** @type {Record<string, HTMLElement | undefined>} */
    const fields = this.f;
    (fields[String(field)] ?? this.f["profile-choice"]).focus();
  }

  /**
   * @param {string | null} vendor
   * @param {string | null} model
   * @returns {Profile | null}
   */
  #profileOf(vendor, model) {
    const candidates = [this.active, ...this.profiles].filter((p) => p?.vendor === vendor);
    return candidates.find((p) => p?.model === model) ?? candidates[0] ?? null;
  }

  /** A new profile from the setup card's few fields; the key is this tab's (save it encrypted in Settings). */
  /**
   * @param {{vendor: string, api_key?: string, base_url?: string, model: string, name?: string}} fields
   * @returns {Promise<Profile>}
   */
  async addProfile({ vendor, api_key = "", base_url = "", model, name = "" }) {
    /** @type {Profile} */
    const profile = { id: crypto.randomUUID(), name: name || `${vendorLabel(vendor)} · ${model}`, vendor,
      base_url, model, uses_key: Boolean(api_key) };
    if (api_key) this.keys.set(profile.id, api_key);
    await this.#persist(profile);
    this.activate(profile);
    return profile;
  }

  /**
   * @param {Provider} provider
   * @returns {Promise<import("../types/contract").ModelEntry[]>}
   */
  async listModels(provider) {
    const { models } = /** @type {import("../types/contract").ModelsResult} */ (
      await this.core.call("models.list", { provider }));
    return models;
  }

  #fillChoice() {
    const choice = this.f["profile-choice"];
    choice.replaceChildren(...this.profiles.map((p) => h("option", { value: p.id }, p.name || p.model)),
      h("option", { value: "" }, t("settings.newProfile")));
    choice.value = this.editing?.id ?? "";
    const chosen = this.classifierChoice();
    this.classifierProfile.replaceChildren(h("option", { value: "" }, t("settings.classifierSameProfile")),
      ...this.profiles.map((p) => h("option", { value: p.id }, p.name || p.model)));
    this.classifierProfile.value = this.#byId(chosen.profile) ? chosen.profile : "";
    this.classifierModel.value = chosen.model;
  }

  classifierChoice() {
    /** @type {{profile?: unknown, model?: unknown} | null} what was saved, as parsed */
    const saved = prefs.getJSON(PREFS.classifier, {});
    return { profile: String(saved?.profile ?? ""), model: String(saved?.model ?? "") };
  }

  /**
   * @param {Target} target
   * @returns {import("../types/contract").ClassifierSpec}
   */
  classifierFor(target) {
    const chosen = this.classifierChoice();
    const profile = this.#byId(chosen.profile);
    if (!profile) return { provider: target.provider, model: chosen.model || target.model };
    const { provider } = this.#targetOf(profile);
    return { provider, model: chosen.model || (profile.model ?? "") };
  }

  /** @param {Profile | null} profile */
  #edit(profile) {
    const f = this.f;
    this.editing = profile;
    this.#fillChoice();
    f["profile-name"].value = profile?.name ?? "";
    f.provider.value = profile?.vendor ?? VENDORS[0]; // a new profile starts on the catalogue's first vendor
    f["base-url"].value = profile?.base_url ?? "";
    this.#showDefaultBase();
    f.model.value = profile?.model ?? "";
    f["api-key"].value = (profile && this.keys.get(profile.id)) ?? "";
    f["remember-key"].checked = false;
    f.passphrase.value = "";
    f.passphrase.disabled = true;
    f["unlock-passphrase"].value = "";
    const sealed = Boolean(profile?.key);
    f["saved-key-row"].hidden = !sealed;
    f["unlock-row"].hidden = !profile || !sealed || Boolean(this.keys.get(profile.id));
    f["models-status"].textContent = "";
    f["model-list"].replaceChildren();
    byId("delete-profile", HTMLButtonElement).disabled = !profile;
  }

  /** The Base URL left empty means the vendor's own address (a known service's, from the catalogue): shown. */
  #showDefaultBase() {
    this.f["base-url"].placeholder = vendorInfo(this.f.provider.value)?.default_base_url ?? "https://…";
  }

  #providerChanged() {
    this.#showDefaultBase();
    this.f["model-list"].replaceChildren();
    this.f["models-status"].textContent = "";
  }

  /** @returns {Provider} */
  #formProvider() {
    const f = this.f;
    /** @type {Provider} */
    const provider = { vendor: f.provider.value };
    const key = f["api-key"].value.trim();
    const base = f["base-url"].value.trim();
    if (key) provider.api_key = key;
    if (base) provider.base_url = base;
    return provider;
  }

  async loadModels() {
    const status = this.f["models-status"];
    if (!this.coreReadyNow()) {
      status.textContent = t("settings.modelsWaiting");
      return;
    }
    status.textContent = "…";
    try {
      const models = await this.listModels(this.#formProvider());
      this.f["model-list"].replaceChildren(...models.map((m) => h("option", { value: m.id }, m.name ?? m.id)));
      status.textContent = t("settings.modelsLoaded", { count: models.length });
      if (!this.f.model.value && models[0]) this.f.model.value = models[0].id;
    } catch (err) {
      status.textContent = t("settings.modelsFailed", { message: messageOf(err) });
    }
  }

  #save() {
    const f = this.f;
    const status = f["settings-status"];
    const provider = this.#formProvider();
    const model = f.model.value.trim();
    if (!model) return void (status.textContent = t("settings.needModel"));
    if (vendorInfo(provider.vendor)?.needs_base_url && !provider.base_url) {
      return void (status.textContent = t("settings.needBaseUrl"));
    }
    const remember = f["remember-key"].checked && Boolean(provider.api_key);
    if (remember && !f.passphrase.value) return void (status.textContent = t("settings.needPassphrase"));
    const seal = remember && provider.api_key ? { passphrase: f.passphrase.value, key: provider.api_key } : null;
    const id = this.editing?.id ?? crypto.randomUUID();
    /** @type {Profile} */
    const profile = {
      ...(this.editing ?? {}),
      id,
      name: f["profile-name"].value.trim() || `${vendorLabel(provider.vendor)} · ${model}`,
      vendor: provider.vendor,
      base_url: provider.base_url ?? "",
      model,
      uses_key: Boolean(provider.api_key) || Boolean(this.editing?.key),
    };
    if (provider.api_key) this.keys.set(id, provider.api_key);
    else this.keys.delete(id);
    // The profile is in use at once and the dialog closes at once: what is typed next goes to the page, not
    // to a dialog waiting for the key's encryption (PBKDF2) and the write. A failed write brings it back.
    this.#remember(profile);
    this.editing = profile;
    this.activate(profile);
    status.textContent = "";
    this.dialog.close();
    this.#write(profile, seal).catch((err) => {
      status.textContent = t("settings.saveFailed", { message: messageOf(err) });
      if (!this.dialog.open) this.dialog.showModal();
    });
  }

  /**
   * @param {Profile} profile
   * @param {{passphrase: string, key: string} | null} seal
   */
  async #write(profile, seal) {
    if (seal) profile.key = await this.keysApi.encryptSecret(seal.passphrase, seal.key);
    await this.#persist(profile);
    if (seal) this.notify(t("settings.keySaved"));
  }

  /** @param {Profile} profile */
  async #persist(profile) {
    const { python_tools: _python, ...record } = profile; // the store keeps its own fields; see pythonTools()
    Object.assign(profile, await this.profilesApi.save(record));
    this.#remember(profile);
  }

  /** @param {Profile} profile */
  #remember(profile) {
    const i = this.profiles.findIndex((p) => p.id === profile.id);
    if (i >= 0) this.profiles[i] = profile;
    else this.profiles.push(profile);
  }

  /** Save extra, non-secret fields of the active profile (the Python tools' source). */
  /** @param {Partial<Profile>} fields */
  async update(fields) {
    if (!this.active) return;
    if ("python_tools" in fields) prefs.set(PREFS.pythonTools + this.active.id, fields.python_tools ?? "");
    const profile = { ...this.active, ...fields };
    await this.#persist(profile);
    this.active = profile;
  }

  /** @param {Profile | null} profile */
  activate(profile) {
    this.active = profile;
    if (profile) prefs.set(PREFS.activeProfile, profile.id);
    if (profile) profile.python_tools = prefs.get(PREFS.pythonTools + profile.id) ?? "";
    this.onChange(profile);
  }

  /** @param {string} id */
  switchTo(id) {
    const profile = this.#byId(id);
    if (profile) this.activate(profile);
  }

  /** @param {string} model */
  async setModel(model) {
    if (!this.active || !model || model === this.active.model) return;
    await this.update({ model });
    this.onChange(this.active);
  }

  async #unlock() {
    const profile = this.editing;
    if (!profile?.key) return;
    try {
      const key = await this.keysApi.decryptSecret(this.f["unlock-passphrase"].value, profile.key);
      this.keys.set(profile.id, key);
      this.f["api-key"].value = key;
      this.f["unlock-row"].hidden = true;
      this.f["settings-status"].textContent = t("settings.unlocked");
    } catch {
      this.f["settings-status"].textContent = t("settings.wrongPassphrase");
    }
  }

  async #forgetKey() {
    const profile = this.editing;
    if (!profile) return;
    const { key, ...rest } = profile;
    await this.#persist(rest);
    this.editing = rest;
    if (this.active?.id === rest.id) this.active = rest;
    this.f["saved-key-row"].hidden = true;
    this.f["unlock-row"].hidden = true;
  }

  async #deleteEditing() {
    const profile = this.editing;
    if (!profile) return;
    await this.profilesApi.delete(profile.id);
    this.profiles = this.profiles.filter((p) => p.id !== profile.id);
    this.keys.delete(profile.id);
    if (this.active?.id === profile.id) this.activate(this.profiles[0] ?? null);
    this.#edit(this.active);
  }

  /** The next turn's {provider, model, vendor}: of profile `profileId` (an assistant's), else the active one. */
  /**
   * @param {string | null} [profileId]
   * @returns {Target}
   */
  target(profileId = null) {
    const profile = (profileId && this.profiles.find((p) => p.id === profileId)) || this.active;
    if (!profile) throw new Error(t("chat.noProfile"));
    return this.#targetOf(profile);
  }

  /**
   * @param {Profile} profile
   * @param {{key?: string | null, passphrase?: string | null}} given
   */
  async provideKey(profile, { key = null, passphrase = null }) {
    const plain = passphrase !== null ? await this.keysApi.decryptSecret(passphrase, profile.key) : key?.trim();
    if (!plain) throw new Error(t("chat.noKey"));
    this.keys.set(profile.id, plain);
  }

  /**
   * @param {Profile} profile
   * @returns {Target}
   */
  #targetOf(profile) {
    const key = this.keys.get(profile.id);
    if (!key && (profile.key || profile.uses_key || vendorInfo(profile.vendor)?.needs_key !== false)) {
      throw new MissingKeyError(profile);
    }
    /** @type {Provider} */
    const provider = { vendor: profile.vendor };
    if (key) provider.api_key = key;
    if (profile.base_url) provider.base_url = profile.base_url;
    const vendor = vendorInfo(profile.vendor)?.adapter ?? profile.vendor; // an alias speaks its adapter's API
    // Settings saves every profile with a model; the stored record's type allows none, which the core refuses.
    return { provider, model: profile.model ?? "", vendor: profile.vendor, wireVendor: vendor };
  }
}
