/**
 * Settings → "Sync": this browser's conversations, end-to-end encrypted, in a WebDAV folder the user owns
 * (web/sync/: the folder sees only opaque names and ciphertext).
 *
 *   const sync = new SyncSettings({element, store, notify, sessionKeys, onSettings});  await sync.load()
 *   onSettings(): sync brought settings, assistants, prompts or MCP entries from another device: re-read them
 *
 * Turned on with a WebDAV folder (its URL, user name and password) or a folder on this computer (the File System
 * Access API's picker, where the browser has it), and a sync passphrase (the same on every device; a wrong one is
 * refused before anything is read or written). Then it syncs at once, again after every change
 * here (2 s later: a conversation's, or a dialog closed, where settings, prompts and servers are edited), when
 * the page comes back into view and every 5 minutes; offline, it waits and catches up.
 * The status line always says where it stands: off, working (n of total, with a progress bar), synced (when,
 * what came and went), or why the last try failed and what to do.
 * Settings, assistants, prompts and MCP server entries sync too (sync/settings.js: never a key or a header value);
 * API keys only when the user ticks "Sync API keys too" (this browser's choice, off by default): then sealed by the
 * sync passphrase, and unticking it takes them out of the folder.
 * A WebDAV server that sends no CORS headers: the doctor says what to set on it and, when this page came from the
 * relay (relayToken), offers "Sync through the relay" if the relay forwards to that folder (--allow-webdav), or
 * shows the line that makes it do so; the sync then goes through the relay (webdav.js), from this browser on.
 */

import { h } from "./dom.js";
import { onLanguageChange, t } from "./i18n.js";
import { openFolder, SyncPassphraseError, syncOnce } from "../sync/engine.js";
import { forgetSaved, loadSaved, loadState, saveSaved, saveState } from "../sync/saved.js";
import { SyncError, SyncTargetError } from "../sync/target.js";
import { SyncTamperedError } from "../sync/crypto.js";
import { diagnoseWebDav } from "../sync/doctor.js";
import { WebDavTarget } from "../sync/webdav.js";
import { FolderTarget } from "../sync/folder.js";
import { keysSource, settingsSource } from "../sync/settings.js";
import { eraseRecords } from "../sync/records.js";
import { listRelayFolders } from "./relay.js";

const AFTER_CHANGE_MS = 2_000;
const EVERY_MS = 5 * 60_000;

/** @param {import("../sync/saved.js").SavedSync} on */
function labelOf(on) {
  if (on.kind === "folder") return t("sync.folder", { url: t("sync.localFolder", { name: on.handle.name }) });
  return on.relay ? t("sync.folderRelay", { url: on.url }) : t("sync.folder", { url: on.url });
}

/** @typedef {{kind: "webdav", url: string, user: string, password: string, relay?: string | null}} WebDavPlace */

export class SyncSettings {
  /** @type {import("../sync/saved.js").SavedSync | null} */
  #on = null;
  #running = /** @type {Promise<void> | null} */ (null);
  #again = false;
  #timer = /** @type {ReturnType<typeof setTimeout> | undefined} */ (undefined);
  /** @type {{kind: string, text: string, done?: number, total?: number}} */
  #status = { kind: "off", text: "" };
  /** What the doctor found when the folder could not be reached (doctor.js): shown under the status line. */
  /** @type {import("../sync/doctor.js").Finding[]} */
  #findings = [];
  /** With those findings, on a page from the relay: the relay's bridge to the folder (its name), or null and the
   *  line that would make one. @type {{name: string | null, url: string} | null} */
  #offer = null;
  /** What the user typed in the form, kept while it is redrawn (a refusal keeps every field as it was). */
  #draft = { url: "", user: "", password: "", passphrase: "" };

  /**
   * @param {{element: HTMLElement, store: import("../store/transcripts.js").Store,
   *   notify: import("./notify.js").Notify, sessionKeys: {get: (id: string) => string | undefined,
   *   set: (id: string, key: string) => void}, onSettings?: () => Promise<void>, relayToken?: string | null}} parts
   */
  constructor({ element, store, notify, sessionKeys, onSettings = async () => {}, relayToken = null }) {
    Object.assign(this, { element, store, notify });
    this.element = element;
    this.store = store;
    this.sessionKeys = sessionKeys;
    this.onSettings = onSettings;
    this.relayToken = relayToken;
    onLanguageChange(() => this.render());
    store.onLocalChange((/** @type {{type: string}} */ change) => { if (change.type !== "delta") this.#soon(); });
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") this.#soon(0); });
    // Settings, prompts, assistants and MCP servers are edited in dialogs: closing one may have changed them.
    document.addEventListener("close", (ev) => { if (ev.target instanceof HTMLDialogElement) this.#soon(); }, true);
    addEventListener("online", () => this.#soon(0));
    setInterval(() => this.#soon(0), EVERY_MS);
    this.render();
  }

  async load() {
    try {
      this.#on = await loadSaved(this.store.db);
    } catch {
      this.#on = null; // keys this browser can no longer use: sync shows as off, nothing is lost
    }
    this.render();
    if (this.#on) this.#soon(0);
  }

  /** Every change of this browser's store (this tab's too) asks for a sync a moment later. */
  #soon(delay = AFTER_CHANGE_MS) {
    if (!this.#on) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.syncNow(), delay);
  }

  async syncNow() {
    if (!this.#on) return;
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#sync(this.#on).finally(() => {
      this.#running = null;
      if (this.#again) {
        this.#again = false;
        this.#soon(0);
      }
    });
    return this.#running;
  }

  /** @param {import("../sync/saved.js").SavedSync} on */
  async #sync(on) {
    if (!navigator.onLine) return this.#show("offline", t("sync.offline"));
    const target = this.#targetOf(on);
    if (target instanceof FolderTarget && !(await target.allowed(false))) return this.#show("failed", t("sync.allowAgain"));
    const state = await loadState(this.store.db);
    this.#show("working", t("sync.working"));
    try {
      const db = this.store.db;
      const sources = [settingsSource({ db }), ...(on.apiKeys ? [keysSource({ db, sessionKeys: this.sessionKeys })] : [])];
      const { downloaded, uploaded, settings } = await syncOnce({
        store: this.store, target, keys: on.keys, state, sources,
        onProgress: (done, total) => this.#progress(done, total),
      });
      if (settings.downloaded) await this.onSettings();
      const changed = settings.downloaded + settings.uploaded
        ? ` ${t("sync.syncedSettings", { downloaded: settings.downloaded, uploaded: settings.uploaded })}` : "";
      this.#show("synced", t("sync.synced", { time: new Date().toLocaleTimeString(), downloaded, uploaded }) + changed);
    } catch (err) {
      await this.#failed(err, target);
    } finally {
      await saveState(this.store.db, state); // what was done stays done: the next sync resumes from here
    }
  }

  /**
   * Why it failed, said; a WebDAV folder that gave no answer this page may read gets the doctor, who says what the
   * server must send (its CORS headers) or that it cannot be reached at all.
   * @param {unknown} err @param {import("../sync/target.js").SyncTarget | null} target
   */
  async #failed(err, target) {
    this.#show("failed", this.#why(err));
    if (!(err instanceof SyncTargetError && err.kind === "unreachable" && target instanceof WebDavTarget)) return;
    const findings = await diagnoseWebDav(target);
    const offer = await this.#relayOffer(target, findings);
    if (this.#status.kind !== "failed") return; // moved on meanwhile
    this.#findings = findings;
    this.#offer = offer;
    this.render();
  }

  /** @param {import("../sync/saved.js").SavedSync} on */
  #targetOf(on) {
    return on.kind === "folder" ? new FolderTarget(on.handle) : this.#webdav(on);
  }

  /** @param {WebDavPlace} place */
  #webdav(place) {
    const relay = place.relay ? { name: place.relay, token: this.relayToken } : null;
    return new WebDavTarget(place.url, { ...place, relay });
  }

  /**
   * The server lacks CORS headers (what the doctor found) and this page came from the relay: the relay's bridge
   * to this folder, or {name: null} when the relay does not forward to it yet (the page shows the line to add).
   * @param {WebDavTarget} target @param {import("../sync/doctor.js").Finding[]} findings
   */
  async #relayOffer(target, findings) {
    if (!this.relayToken || target.relay || !findings.some(({ code }) => code !== "unreachable")) return null;
    const url = target.folder.href;
    try {
      const folders = await listRelayFolders(this.relayToken);
      return { name: folders.find((f) => f.target === url)?.name ?? null, url };
    } catch {
      return null; // the relay did not answer: the doctor's advice for the server stands alone
    }
  }

  /** "Sync through the relay": the folder that failed, now through the relay's bridge named `name`. @param {string} name */
  async #useRelay(name) {
    const on = this.#on;
    if (on?.kind === "webdav") {
      this.#on = { ...on, relay: name };
      await saveSaved(this.store.db, this.#on);
      return this.syncNow();
    }
    const draft = this.#draft;
    if (!draft.url.trim() || !draft.passphrase) return this.#show("failed", t("sync.needFields"));
    return this.#turnOn({ kind: "webdav", url: draft.url.trim(), user: draft.user, password: draft.password, relay: name },
      draft.passphrase);
  }

  /** @param {unknown} err */
  #why(err) {
    if (err instanceof SyncTamperedError) return t("sync.tampered", { message: t(err.key, err.vars) });
    if (err instanceof SyncTargetError || err instanceof SyncPassphraseError) return t(err.key, err.vars);
    if (err instanceof SyncError) return t("sync.failed", { message: t(err.key, err.vars) });
    return t("sync.failed", { message: err instanceof Error ? err.message : String(err) });
  }

  /** @param {number} done @param {number} total */
  #progress(done, total) {
    const drawn = this.#status.kind === "working" && this.#status.total;
    this.#status = { kind: "working", text: t("sync.progress", { done, total }), done, total };
    const bar = this.element.querySelector("progress");
    const status = this.element.querySelector("#sync-status");
    if (!drawn || !bar || !status) return this.render();
    bar.max = total; // moved in place: a first sync steps thousands of times, the form is not drawn again each time
    bar.value = done;
    status.textContent = this.#status.text;
  }

  /** @param {string} kind @param {string} text */
  #show(kind, text) {
    this.#status = { kind, text };
    this.#findings = [];
    this.#offer = null;
    this.render();
  }

  /**
   * @param {WebDavPlace | {kind: "folder", handle: FileSystemDirectoryHandle}} place
   * @param {string} passphrase
   */
  async #turnOn(place, passphrase) {
    this.#show("working", t("sync.opening"));
    /** @type {import("../sync/target.js").SyncTarget | null} */
    let target = null;
    try {
      target = place.kind === "folder" ? new FolderTarget(place.handle) : this.#webdav(place);
      const keys = await openFolder(target, passphrase);
      this.#on = place.kind === "folder" ? { ...place, keys } : { ...place, url: target.label, keys };
      await saveSaved(this.store.db, this.#on);
      this.#draft = { url: "", user: "", password: "", passphrase: "" }; // secrets leave the page's memory
    } catch (err) {
      this.#on = null;
      return this.#failed(err, target);
    }
    await this.syncNow();
  }

  /** "Sync API keys too": on, the next sync sends them; off, they are taken out of the folder now. @param {boolean} on */
  async #syncKeys(on) {
    const saved = this.#on;
    if (!saved) return;
    saved.apiKeys = on;
    await saveSaved(this.store.db, saved);
    if (!on) {
      this.#show("working", t("sync.keysLeaving"));
      const state = await loadState(this.store.db);
      try {
        await eraseRecords({ kind: "k", target: this.#targetOf(saved), keys: saved.keys, state });
      } catch (err) {
        return this.#show("failed", this.#why(err));
      } finally {
        await saveState(this.store.db, state);
      }
    }
    await this.syncNow();
  }

  /**
   * Where a shared link's file goes (share_link.js): this sync's folder, or null when sync is off. `address` is the
   * file's web address (for a folder on this computer, only its name: the user's storage gives the address).
   */
  async shareTarget() {
    const on = this.#on;
    if (!on) return null;
    const target = this.#targetOf(on);
    if (target instanceof FolderTarget) {
      if (!(await target.allowed(true))) return null;
      return { target, folder: true, address: (/** @type {string} */ name) => name };
    }
    return { target, folder: false, address: (/** @type {string} */ name) => new URL(name, target.folder).href };
  }

  async #turnOff() {
    clearTimeout(this.#timer);
    this.#on = null;
    await forgetSaved(this.store.db);
    this.#show("off", t("sync.turnedOff"));
  }

  render() {
    const failed = this.#status.kind === "failed";
    const status = h("p", { className: failed ? "status-line error" : "status-line", id: "sync-status", "aria-live": "polite",
                            dataset: { state: this.#status.kind } },
      this.#status.text || t(this.#on ? "sync.onIdle" : "sync.offIdle"));
    const bar = this.#status.kind === "working" && this.#status.total
      ? h("progress", { max: String(this.#status.total), value: String(this.#status.done ?? 0), "aria-label": t("sync.progressLabel") })
      : null;
    const doctor = this.#findings.length
      ? h("div", { className: "doctor", id: "sync-doctor" }, h("h4", {}, t("sync.doctorTitle")),
        h("ul", {}, ...this.#findings.map((f) => h("li", {}, t(`sync.doctor.${f.code}`, f)))), ...this.#offerControls())
      : null;
    this.element.replaceChildren(h("legend", {}, t("sync.title")), h("small", { className: "hint" }, t("sync.hint")),
      ...(this.#on ? this.#onControls() : this.#offControls()), ...(bar ? [bar] : []), status, ...(doctor ? [doctor] : []));
  }

  #onControls() {
    const on = /** @type {import("../sync/saved.js").SavedSync} */ (this.#on);
    const allow = async () => { // a click: the browser may ask the user to let this page use the folder again
      if (on.kind === "folder" && await new FolderTarget(on.handle).allowed(true)) await this.syncNow();
    };
    const keysBox = h("input", { type: "checkbox", id: "sync-api-keys", checked: Boolean(on.apiKeys),
      onchange: (/** @type {Event} */ ev) => void this.#syncKeys(/** @type {HTMLInputElement} */ (ev.target).checked) });
    return [h("p", { className: "hint" }, labelOf(on)),
      h("label", { className: "check" }, keysBox, ` ${t("sync.apiKeys")}`),
      h("small", { className: "hint" }, t("sync.apiKeysHint")),
      h("div", { className: "inline" },
        h("button", { type: "button", onclick: () => void (on.kind === "folder" ? allow() : this.syncNow()) }, t("sync.now")),
        h("button", { type: "button", onclick: () => void this.#turnOff() }, t("sync.off")))];
  }

  /** Under the doctor, on a page from the relay: sync through it, or the line that lets it reach this folder. */
  #offerControls() {
    const offer = this.#offer;
    if (!offer) return [];
    const { name } = offer;
    if (name === null) {
      return [h("p", { className: "hint", id: "sync-relay" }, t("sync.relayLine")),
        h("pre", {}, h("code", {}, `python3 build.py serve --allow-webdav sync=${offer.url}`))];
    }
    return [h("p", { className: "hint", id: "sync-relay" }, t("sync.viaRelayHint", { url: offer.url })),
      h("button", { type: "button", onclick: () => void this.#useRelay(name) }, t("sync.viaRelay"))];
  }

  #offControls() {
    const draft = this.#draft;
    /** @param {"url" | "user" | "password" | "passphrase"} key @param {string} label @param {Record<string, string>} attrs */
    const field = (key, label, attrs) => {
      const input = h("input", { id: `sync-${key}`, autocomplete: "off", spellcheck: "false", ...attrs });
      const box = /** @type {HTMLInputElement} */ (input);
      box.value = draft[key];
      box.addEventListener("input", () => (draft[key] = box.value));
      return [h("label", { for: `sync-${key}` }, label), input];
    };
    const start = () => {
      if (!draft.url.trim() || !draft.passphrase) return this.#show("failed", t("sync.needFields"));
      void this.#turnOn({ kind: "webdav", url: draft.url.trim(), user: draft.user, password: draft.password },
        draft.passphrase);
    };
    const pick = /** @type {{showDirectoryPicker?: (o: object) => Promise<FileSystemDirectoryHandle>}} */ (
      /** @type {unknown} */ (window)).showDirectoryPicker;
    const chooseFolder = async () => {
      if (!draft.passphrase) return this.#show("failed", t("sync.needPassphrase"));
      let handle;
      try {
        handle = await /** @type {NonNullable<typeof pick>} */ (pick)({ id: "orizuru-sync", mode: "readwrite" });
      } catch {
        return this.#show("off", t("sync.noFolderChosen"));
      }
      await this.#turnOn({ kind: "folder", handle }, draft.passphrase);
    };
    return [...field("url", t("sync.url"), { type: "url", placeholder: "https://cloud.example/remote.php/dav/files/me/orizuru/" }),
      ...field("user", t("sync.user"), {}),
      ...field("password", t("sync.password"), { type: "password" }),
      ...field("passphrase", t("sync.passphrase"), { type: "password", autocomplete: "new-password" }),
      h("small", { className: "hint" }, t("sync.passphraseHint")),
      h("div", { className: "inline" }, h("button", { type: "button", onclick: start }, t("sync.on")),
        pick ? h("button", { type: "button", onclick: () => void chooseFolder() }, t("sync.chooseFolder")) : null)];
  }
}
