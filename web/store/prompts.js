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
const VARIABLE = /\{\{\s*([\p{L}\p{N}_-]+)\s*\}\}/gu;

export function variablesOf(text) {
  return [...new Set([...String(text).matchAll(VARIABLE)].map((m) => m[1]))];
}

/** Values are looked up as the object's own text only: {{__proto__}} or {{constructor}} never reach an object's
 *  internals (an imported prompt may name anything). */
export function fillPrompt(text, values) {
  const own = (name) => (Object.hasOwn(values ?? {}, name) && typeof values[name] === "string" ? values[name] : "");
  return String(text).replace(VARIABLE, (_, name) => own(name));
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
    const here = new Map((await this.list()).map((p) => [p.name, p.text]));
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

function checked({ name, text }) {
  if (typeof name !== "string" || !name.trim()) throw new Error("name: a prompt needs a name");
  if (/\s/.test(name.trim())) throw new Error("name: one word, as it is typed after / (e.g. review-code)");
  if (typeof text !== "string" || !text.trim()) throw new Error("text: the prompt is empty");
  return { name: name.trim(), text };
}
