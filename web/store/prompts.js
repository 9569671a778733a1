/**
 * The prompt library: saved prompts with {{variables}} (IndexedDB store "prompts").
 *
 *   const prompts = new Prompts(db)              (a Store has one: store.prompts)
 *   prompts.list() -> [SavedPrompt]              by name
 *   prompts.save({id?, name, text}) -> SavedPrompt   an Error names the bad field
 *   prompts.delete(id)
 *   prompts.exportJSON() -> string               {format: "orizuru.prompts", version: 1, prompts: [{name, text}]}
 *   prompts.importJSON(text) -> {imported}       all checked first; a prompt of the same name is replaced
 *   variablesOf(text) -> [name]                  the {{names}} in order of first use
 *   fillPrompt(text, values) -> string           each {{name}} replaced by values[name] ("" when missing)
 *
 *   SavedPrompt = {id, name, text, updated}; a variable name is letters, digits, _ and -, e.g. {{language}}.
 */

export const PROMPTS_FORMAT = "orizuru.prompts";
const VARIABLE = /\{\{\s*([\p{L}\p{N}_-]+)\s*\}\}/gu;

export function variablesOf(text) {
  return [...new Set([...String(text).matchAll(VARIABLE)].map((m) => m[1]))];
}

export function fillPrompt(text, values) {
  return String(text).replace(VARIABLE, (_, name) => values[name] ?? "");
}

export class Prompts {
  constructor(db) {
    this.db = db;
  }

  async list() {
    return (await this.db.getAll("prompts")).sort((a, b) => a.name.localeCompare(b.name));
  }

  async save({ id = crypto.randomUUID(), name, text }) {
    const prompt = { id, ...checked({ name, text }), updated: Date.now() };
    await this.db.put("prompts", prompt);
    return prompt;
  }

  delete(id) {
    return this.db.delete("prompts", id);
  }

  async exportJSON() {
    const prompts = (await this.list()).map(({ name, text }) => ({ name, text }));
    return JSON.stringify({ format: PROMPTS_FORMAT, version: 1, prompts }, null, 1);
  }

  async importJSON(text) {
    let data;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new Error(`this file is not JSON (${err.message}); choose a file exported from Prompts`, { cause: err });
    }
    if (data?.format !== PROMPTS_FORMAT || !Array.isArray(data.prompts)) {
      throw new Error(`this is not a prompts export: expected {"format": "${PROMPTS_FORMAT}", "prompts": [...]}`);
    }
    const incoming = data.prompts.map((p, i) => {
      try {
        return checked(p ?? {});
      } catch (err) {
        throw new Error(`prompts[${i}]: ${err.message}`, { cause: err });
      }
    });
    const byName = new Map((await this.list()).map((p) => [p.name, p.id]));
    const now = Date.now();
    const tx = this.db.transaction("prompts", "readwrite");
    await Promise.all([...incoming.map((p) => tx.store.put({ id: byName.get(p.name) ?? crypto.randomUUID(), ...p, updated: now })),
                       tx.done]);
    return { imported: incoming.length };
  }
}

function checked({ name, text }) {
  if (typeof name !== "string" || !name.trim()) throw new Error("name: a prompt needs a name");
  if (/\s/.test(name.trim())) throw new Error("name: one word, as it is typed after / (e.g. review-code)");
  if (typeof text !== "string" || !text.trim()) throw new Error("text: the prompt is empty");
  return { name: name.trim(), text };
}
