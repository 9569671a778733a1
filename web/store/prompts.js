/**
 * The prompt library: saved prompts with {{variables}} (IndexedDB store "prompts").
 *
 *   const prompts = new Prompts(db)              (a Store has one: store.prompts)
 *   prompts.list() -> [SavedPrompt]              by name
 *   prompts.save({id?, name, text}) -> SavedPrompt   an Error names the bad field
 *   prompts.delete(id)
 *   prompts.exportJSON() -> string               {format: "orizuru.prompts", version: 1, prompts: [{name, text}]}
 *   prompts.importJSON(text) -> {imported, copies, skipped}   all checked first; nothing is replaced: a prompt
 *                                                named like one here comes in as "<name>-imported", one here word
 *                                                for word is skipped
 *   variablesOf(text) -> [name]                  the {{names}} in order of first use
 *   fillPrompt(text, values) -> string           each {{name}} replaced by values' own text for it ("" when none)
 *
 *   SavedPrompt = {id, name, text, updated}; a variable name is letters, digits, _ and -, e.g. {{language}}.
 */

export const PROMPTS_FORMAT = "orizuru.prompts";
/** @typedef {{id: string, name: string, text: string, updated: number}} SavedPrompt */

const VARIABLE = /\{\{\s*([\p{L}\p{N}_-]+)\s*\}\}/gu;

/**
 * @param {unknown} text
 * @returns {string[]}
 */
export function variablesOf(text) {
  return [...new Set([...String(text).matchAll(VARIABLE)].map((m) => m[1]))];
}

/** Values are looked up as the object's own text only: {{__proto__}} or {{constructor}} never reach an object's
 *  internals (an imported prompt may name anything). */
/**
 * @param {unknown} text
 * @param {Record<string, unknown> | null | undefined} values
 */
export function fillPrompt(text, values) {
  /** @param {string} name */
  const own = (name) => {
    const value = values && Object.hasOwn(values, name) ? values[name] : undefined;
    return typeof value === "string" ? value : "";
  };
  return String(text).replace(VARIABLE, (_, name) => own(name));
}

export class Prompts {
  /** @param {import("idb").IDBPDatabase} db */
  constructor(db) {
    this.db = db;
  }

  /** @returns {Promise<SavedPrompt[]>} */
  async list() {
    /** @type {SavedPrompt[]} */
    const all = await this.db.getAll("prompts");
    return all.sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * @param {{id?: string, name: unknown, text: unknown}} fields
   * @returns {Promise<SavedPrompt>}
   */
  async save({ id = crypto.randomUUID(), name, text }) {
    const prompt = { id, ...checked({ name, text }), updated: Date.now() };
    await this.db.put("prompts", prompt);
    return prompt;
  }

  /** @param {string} id */
  delete(id) {
    return this.db.delete("prompts", id);
  }

  async exportJSON() {
    const prompts = (await this.list()).map(({ name, text }) => ({ name, text }));
    return JSON.stringify({ format: PROMPTS_FORMAT, version: 1, prompts }, null, 1);
  }

  /** @param {string} text */
  async importJSON(text) {
    /** @type {{format?: unknown, prompts?: unknown} | null} */
    let data;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new Error(`this file is not JSON (${/** @type {Error} */ (err).message}); choose a file exported from Prompts`, { cause: err });
    }
    if (data?.format !== PROMPTS_FORMAT || !Array.isArray(data.prompts)) {
      throw new Error(`this is not a prompts export: expected {"format": "${PROMPTS_FORMAT}", "prompts": [...]}`);
    }
    /** @type {({name?: unknown, text?: unknown} | null)[]} */
    const given = data.prompts;
    const incoming = given.map((p, i) => {
      try {
        return checked(p ?? {});
      } catch (err) {
        throw new Error(`prompts[${i}]: ${/** @type {Error} */ (err).message}`, { cause: err });
      }
    });
    const here = new Map((await this.list()).map((p) => [p.name, p.text]));
    /** @type {{name: string, text: string}[]} */
    const adding = [];
    let copies = 0;
    for (const p of incoming) {
      if (here.get(p.name) === p.text) continue; // already here, word for word
      let name = p.name;
      if (here.has(name)) {
        copies += 1;
        name = `${p.name}-imported`;
        for (let n = 2; here.has(name); n += 1) name = `${p.name}-imported-${n}`;
      }
      here.set(name, p.text);
      adding.push({ ...p, name });
    }
    const now = Date.now();
    const tx = this.db.transaction("prompts", "readwrite");
    await Promise.all([...adding.map((p) => tx.store.add({ id: crypto.randomUUID(), ...p, updated: now })), tx.done]);
    return { imported: adding.length, copies, skipped: incoming.length - adding.length };
  }
}

/**
 * @param {{name?: unknown, text?: unknown}} fields
 * @returns {{name: string, text: string}}
 */
function checked({ name, text }) {
  if (typeof name !== "string" || !name.trim()) throw new Error("name: a prompt needs a name");
  if (/\s/.test(name.trim())) throw new Error("name: one word, as it is typed after / (e.g. review-code)");
  if (typeof text !== "string" || !text.trim()) throw new Error("text: the prompt is empty");
  return { name: name.trim(), text };
}
