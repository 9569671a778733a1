/**
 * Saved provider profiles (IndexedDB store "profiles"). A plain API key is never written: a profile
 * holds either an encrypted key record (keys.js) or none, and saving anything else is refused.
 *
 *   const profiles = new Profiles(db)            (a Store has one: store.profiles)
 *   profiles.list() -> [Profile]                 by name
 *   profiles.get(id) -> Profile | undefined
 *   profiles.save({id?, name, vendor, base_url?, model?, key?: KeyRecord | null, uses_key?}) -> Profile
 *   profiles.delete(id)
 *
 *   Profile = {id, name, vendor, base_url: string | null, model: string | null, key: KeyRecord | null,
 *              uses_key: boolean, updated}
 *   uses_key: the profile was given an API key (kept in memory, or saved as `key`). Not the key: only
 *   that one is needed, so a vendor that can work without one (Ollama, OpenAI-compatible) is not sent
 *   a request without it after a reload forgot it.
 *   vendor: one of VENDORS (the core's adapters and their aliases: pycore.adapters.catalogue())
 */

import { isKeyRecord } from "./keys.js";
import { VENDORS as CATALOGUE } from "../contract.js";

/**
 * @typedef {{id: string, name: string, vendor: string, base_url: string | null, model: string | null,
 *   key: import("./keys.js").KeyRecord | null, uses_key: boolean, updated: number}} Profile
 */

export const VENDORS = Object.freeze(CATALOGUE.map((v) => v.id)); // the core's adapters (pycore.adapters.catalogue())

export class Profiles {
  /** @param {import("idb").IDBPDatabase} db */
  constructor(db) {
    this.db = db;
  }

  /** @returns {Promise<Profile[]>} */
  async list() {
    /** @type {Profile[]} */
    const all = await this.db.getAll("profiles");
    return all.sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * @param {string} id
   * @returns {Promise<Profile | undefined>}
   */
  get(id) {
    return this.db.get("profiles", id);
  }

  /**
   * @param {{id?: string, name: unknown, vendor: unknown, base_url?: string | null, model?: string | null,
   *   key?: unknown, uses_key?: boolean} & Record<string, unknown>} fields
   * @returns {Promise<Profile>}
   */
  async save({ id = crypto.randomUUID(), name, vendor, base_url = null, model = null, key = null, uses_key = false,
               ...extra }) {
    if ("api_key" in extra || "apiKey" in extra) {
      throw new Error("a profile never stores a plain API key: encrypt it with encryptSecret() and pass it as `key`");
    }
    if (key !== null && !isKeyRecord(key)) {
      throw new Error("profile key must be an encrypted key record from encryptSecret(), or null");
    }
    if (typeof name !== "string" || !name.trim()) throw new Error("a profile needs a name");
    if (typeof vendor !== "string" || !VENDORS.includes(vendor)) throw new Error(`unknown vendor ${JSON.stringify(vendor)}; expected one of ${VENDORS.join(", ")}`);
    const profile = { id, name: name.trim(), vendor, base_url: base_url || null, model: model || null, key,
                      uses_key: Boolean(uses_key || key), updated: Date.now() };
    await this.db.put("profiles", profile);
    return profile;
  }

  /** @param {string} id */
  delete(id) {
    return this.db.delete("profiles", id);
  }
}
