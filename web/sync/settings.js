/**
 * What sync carries besides conversations (records.js merges them): the user's settings, never a secret.
 *
 *   settingsSource({db}) -> RecordSource ("s")     provider profiles (name, vendor, base URL, model; never a key, not
 *                                                 even the one saved encrypted under its own passphrase), assistants,
 *                                                 saved prompts, MCP servers added by URL (URL and header NAMES: a
 *                                                 header's value is never kept anywhere), and the preferences in
 *                                                 SYNCED_PREFS
 *   keysSource({db, sessionKeys}) -> RecordSource ("k")   API keys, only when the user turns that on: the keys this
 *                                                 tab holds, sealed by the sync passphrase like every record, and
 *                                                 given back to the tab's memory on the other device (never written
 *                                                 there: read from the folder again at each sync)
 *
 * Ids: "profile:<id>", "assistant:<id>", "prompt:<id>", "mcp:<id>", "pref:<name>"; keys "profile:<id>".
 * Left out on purpose: which profile is active, the folders MCP servers may see (this machine's paths), tool
 * approvals and trusted servers (a choice made where it was seen), image hosts and package hosts (what this
 * browser may load), the voice that reads aloud (each device has its own voices) and what replies cost each day
 * (this browser's spend: a daily cap counts what this browser spent; last writer wins would lose a device's).
 */

import { normalizeAssistant } from "../store/assistants.js";
import { VENDORS } from "../store/profiles.js";
import { PREFS, prefs } from "../store/prefs.js";

/** @typedef {import("./records.js").RecordSource} RecordSource */
/** @typedef {import("idb").IDBPDatabase} Database */

export const SYNCED_PREFS = Object.freeze(/** @type {(keyof typeof PREFS)[]} */ ([
  "language", "theme", "autoTitle", "assistant", "classifier", "focusTemplates", "samplingMaxTokens",
  "samplingMaxInputChars", "interpreterTimeout", "interpreterNotebooks", "interpreterLeftMinutes",
  "costs", "voiceDictation", "voiceReader", "voiceSpeed",
]));

/** @typedef {{id: string, url: string, headerNames: string[]}} McpEntry */

/** @param {unknown} value @returns {McpEntry | null} */
function mcpEntry(value) {
  const v = /** @type {{id?: unknown, url?: unknown, headerNames?: unknown} | null} */ (value);
  if (typeof v?.id !== "string" || typeof v.url !== "string" || !/^https?:\/\//i.test(v.url)) return null;
  const names = Array.isArray(v.headerNames) ? v.headerNames.filter((n) => typeof n === "string") : [];
  return { id: v.id, url: v.url, headerNames: names };
}

/** @param {unknown} value the profile as synced: its own fields, no key */
function profileOf(value) {
  const p = /** @type {Record<string, unknown>} */ (value);
  if (typeof p?.id !== "string" || typeof p.name !== "string" || typeof p.vendor !== "string"
      || !VENDORS.includes(p.vendor)) return null;
  const text = (/** @type {unknown} */ v) => (typeof v === "string" && v ? v : null);
  return { id: p.id, name: p.name, vendor: p.vendor, base_url: text(p.base_url), model: text(p.model),
           uses_key: Boolean(p.uses_key), updated: Number(p.updated) || 0 };
}

/** @param {unknown} value */
function promptOf(value) {
  const p = /** @type {Record<string, unknown>} */ (value);
  if (typeof p?.id !== "string" || typeof p.name !== "string" || typeof p.text !== "string") return null;
  return { id: p.id, name: p.name, text: p.text, updated: Number(p.updated) || 0 };
}

/**
 * @param {{db: Database}} parts
 * @returns {RecordSource}
 */
export function settingsSource({ db }) {
  /** @type {Record<string, {records: () => Promise<[string, unknown][]>, apply: (id: string, value: unknown) => Promise<unknown>}>} */
  const kinds = {
    profile: {
      records: async () => (await db.getAll("profiles")).map((p) => [p.id, profileOf(p)]),
      apply: async (id, value) => {
        const profile = value === null ? null : profileOf({ ...(/** @type {object} */ (value)), id });
        if (value !== null && !profile) return undefined;
        if (!profile) return void await db.delete("profiles", id);
        const here = await db.get("profiles", id);
        await db.put("profiles", { ...profile, key: here?.key ?? null }); // a key saved here stays here
        return profile;
      },
    },
    assistant: {
      records: async () => (await db.getAll("assistants")).map((a) => [a.id, a]),
      apply: async (id, value) => {
        if (value === null) return void await db.delete("assistants", id);
        let assistant;
        try {
          assistant = normalizeAssistant({ ...(/** @type {object} */ (value)), id });
        } catch {
          return undefined; // a field this version does not take: left as it is here
        }
        await db.put("assistants", assistant);
        return assistant;
      },
    },
    prompt: {
      records: async () => (await db.getAll("prompts")).map((p) => [p.id, p]),
      apply: async (id, value) => {
        const prompt = value === null ? null : promptOf({ ...(/** @type {object} */ (value)), id });
        if (value !== null && !prompt) return undefined;
        if (!prompt) return void await db.delete("prompts", id);
        await db.put("prompts", prompt);
        return prompt;
      },
    },
    mcp: {
      records: async () => prefs.getJSON(PREFS.mcpServers, /** @type {unknown[]} */ ([])).map(mcpEntry)
        .filter((e) => e !== null).map((e) => [e.id, e]),
      apply: async (id, value) => {
        const entry = value === null ? null : mcpEntry({ ...(/** @type {object} */ (value)), id });
        if (value !== null && !entry) return undefined;
        const others = prefs.getJSON(PREFS.mcpServers, /** @type {McpEntry[]} */ ([])).filter((e) => e?.id !== id);
        prefs.setJSON(PREFS.mcpServers, entry ? [...others, entry] : others);
        return entry ?? undefined;
      },
    },
    pref: {
      records: async () => SYNCED_PREFS.map((name) => /** @type {[string, unknown]} */ ([name, prefs.get(PREFS[name])])),
      apply: async (name, value) => {
        if (!SYNCED_PREFS.includes(/** @type {keyof typeof PREFS} */ (name))) return undefined;
        const key = PREFS[/** @type {keyof typeof PREFS} */ (name)];
        if (value === null) return void prefs.remove(key);
        if (typeof value !== "string") return undefined;
        prefs.set(key, value);
        return value;
      },
    },
  };
  return {
    kind: "s", tombstones: true, everyTime: false,
    async records() {
      /** @type {Map<string, unknown>} */
      const all = new Map();
      for (const [kind, { records }] of Object.entries(kinds)) {
        for (const [id, value] of await records()) if (value !== null) all.set(`${kind}:${id}`, value);
      }
      return all;
    },
    async apply(id, value) {
      const at = id.indexOf(":");
      const kind = kinds[id.slice(0, at)];
      return kind ? kind.apply(id.slice(at + 1), value) : undefined;
    },
  };
}

/**
 * @param {{db: Database, sessionKeys: {get: (id: string) => string | undefined, set: (id: string, key: string) => void}}} parts
 * @returns {RecordSource}
 */
export function keysSource({ db, sessionKeys }) {
  return {
    kind: "k", tombstones: false, everyTime: true,
    async records() {
      /** @type {Map<string, unknown>} */
      const all = new Map();
      for (const profile of await db.getAll("profiles")) {
        const key = sessionKeys.get(profile.id);
        if (key) all.set(`profile:${profile.id}`, { key });
      }
      return all;
    },
    async apply(id, value) {
      if (!id.startsWith("profile:")) return undefined;
      const profile = id.slice("profile:".length);
      const key = /** @type {{key?: unknown} | null} */ (value)?.key;
      if (typeof key !== "string" || !key) { // a delete (keys taken out of the folder) takes nothing from this tab,
        const here = sessionKeys.get(profile); // and this tab does not put its own back unless it changes
        return here ? { key: here } : undefined;
      }
      sessionKeys.set(profile, key);
      return { key };
    },
  };
}
