/**
 * Assistants: named presets a chat starts from (IndexedDB store "assistants"), and what a chat changes
 * of its assistant for itself (kept on the conversation record, never on the assistant).
 *
 *   const assistants = new Assistants(db)          (a Store has one: store.assistants)
 *   assistants.list() -> [Assistant]               the built-ins first (as the user edited them), then theirs
 *   assistants.get(id) -> Assistant | undefined
 *   assistants.save(fields) -> Assistant           checked by normalizeAssistant (an Error names the field)
 *   assistants.delete(id)                          a built-in goes back to how it shipped
 *   assistants.exportJSON() -> string              {format: "orizuru.assistants", version: 1, assistants}
 *   assistants.readImport(text) -> [{assistant, clash, skip?}]   all checked, nothing written; a clash (an id
 *                                                  or name already here) comes in as a copy named "… (imported)",
 *                                                  one with the same id and settings is skipped (already here)
 *   assistants.addImported(plan) -> {imported, copies}   adds them; an import never replaces an assistant
 *   effectiveSettings(assistant, overrides) -> the settings of the next turn (overrides win, field by field)
 *
 *   Assistant = {id, name, system, profile_id, model, temperature, max_tokens, reasoning, tools, limits,
 *                focus, interpreter, artifacts, tool_mode, builtin?, updated}
 *     profile_id, model    null: the profile and model chosen in the top bar
 *     temperature          0..2 or null (the vendor's default); not sent to a vendor that takes none
 *     max_tokens           the reply's limit, or null
 *     reasoning            null | {effort: "low"|"medium"|"high"} | {budget_tokens: >= 1024}; sent as the
 *                          vendor takes it (the adapter declares effort or budget: contract.js VENDORS)
 *     tools                {mcp: "all" | [server id], python: boolean}: what the assistant may use of what
 *                          the Tools panel allows
 *     limits               {max_steps: int | null, token_budget: int | null} for the tool loop
 *     focus                true / false: focus memory on or off for its chats; null: the chat's own switch
 *     interpreter          true: the model may run Python in the code interpreter (web/sandbox/), the `python` tool
 *     artifacts            true (unless set false): the model may show documents in the artifact panel, the `artifact`
 *                          tool (web/artifacts/); off for a model that takes no tools at all
 *     tool_mode            how the MCP tools are offered: "direct" (as tools, the default), "code" (only to the
 *                          `python` tool's code, as `orizuru.tools`: web/sandbox/code_mode.js) or "both"; "code" and
 *                          "both" offer the `python` tool whatever `interpreter` says
 */

/**
 * @typedef {{id: string, name: string, system: string, profile_id: string | null, model: string | null,
 *   temperature: number | null, max_tokens: number | null, reasoning: AssistantReasoning,
 *   tools: {mcp: "all" | string[], python: boolean}, limits: {max_steps: number | null, token_budget: number | null},
 *   focus: boolean | null, interpreter: boolean, artifacts: boolean, tool_mode: ToolMode, builtin: boolean,
 *   updated: number}} Assistant
 * @typedef {"direct" | "code" | "both"} ToolMode
 * @typedef {null | {effort: string} | {budget_tokens: number | null}} AssistantReasoning
 * @typedef {{[K in keyof Assistant]?: unknown} & {reasoning?: {effort?: unknown, budget_tokens?: unknown} | null | "",
 *   tools?: {mcp?: unknown, python?: unknown} | null, limits?: {max_steps?: unknown, token_budget?: unknown} | null}}
 *   AssistantFields   an assistant as given (a form, an imported file): normalizeAssistant checks every field
 * @typedef {{assistant: Assistant, clash: Assistant | null, skip?: boolean}} ImportPlanItem
 */

export const ASSISTANTS_FORMAT = "orizuru.assistants";
export const EFFORTS = Object.freeze(["low", "medium", "high"]);
/** @type {readonly ToolMode[]} */
export const TOOL_MODES = Object.freeze(["direct", "code", "both"]);

const DEFAULTS = Object.freeze({
  system: "", profile_id: null, model: null, temperature: null, max_tokens: null, reasoning: null,
  tools: Object.freeze({ mcp: "all", python: true }), limits: Object.freeze({ max_steps: null, token_budget: null }),
  focus: null, interpreter: false, artifacts: true, tool_mode: "direct",
});

/** A few useful ones to start from; editing one keeps the edit under the same id. */
export const BUILTIN_ASSISTANTS = Object.freeze([
  { id: "builtin:general", name: "General" },
  { id: "builtin:concise", name: "Concise",
    system: "Answer in as few words as the question allows. No preamble, no summary at the end." },
  { id: "builtin:code", name: "Code helper", temperature: 0.2,
    system: "You are a careful senior software engineer. Answer with working code first, then only the " +
      "explanation that is needed. Say which language and versions you assume." },
  { id: "builtin:analyst", name: "Data analyst", interpreter: true,
    system: "You answer questions about data by computing, not guessing: write Python and run it with the python " +
      "tool, look at the output, then answer from it. Show the numbers you relied on." },
  { id: "builtin:translator", name: "Translator", temperature: 0.3, tools: { mcp: [], python: false }, artifacts: false,
    system: "Translate the user's text. Into English when it is in another language, otherwise into Japanese. " +
      "Keep the meaning, tone and formatting; add nothing." },
].map((a) => normalizeAssistant({ ...a, builtin: true, updated: 0 })));

const BUILTIN_IDS = new Set(BUILTIN_ASSISTANTS.map((a) => a.id));

export class Assistants {
  /** @param {import("idb").IDBPDatabase} db */
  constructor(db) {
    this.db = db;
  }

  /** @returns {Promise<Assistant[]>} */
  async list() {
    /** @type {Assistant[]} */
    const all = await this.db.getAll("assistants");
    const stored = new Map(all.map((a) => [a.id, a]));
    const builtins = BUILTIN_ASSISTANTS.map((a) => stored.get(a.id) ?? a);
    const own = [...stored.values()].filter((a) => !BUILTIN_IDS.has(a.id)).sort((a, b) => a.name.localeCompare(b.name));
    return [...builtins, ...own];
  }

  /**
   * @param {string} id
   * @returns {Promise<Assistant | undefined>}
   */
  async get(id) {
    return (await this.db.get("assistants", id)) ?? BUILTIN_ASSISTANTS.find((a) => a.id === id);
  }

  /** @param {AssistantFields & {id?: string}} fields */
  async save(fields) {
    const assistant = normalizeAssistant({ id: crypto.randomUUID(), ...fields, builtin: BUILTIN_IDS.has(String(fields.id)),
                                           updated: Date.now() });
    await this.db.put("assistants", assistant);
    return assistant;
  }

  /** @param {string} id */
  delete(id) {
    return this.db.delete("assistants", id);
  }

  async exportJSON() {
    const assistants = (await this.list()).map(({ builtin: _b, updated: _u, ...a }) => a);
    return JSON.stringify({ format: ASSISTANTS_FORMAT, version: 1, assistants }, null, 1);
  }

  /**
   * An assistants file read and checked, nothing written: what would come in. An assistant whose id or name is
   * already here (a built-in's above all) comes in as a copy, with an id of its own and "(imported)" after its name,
   * so an import never replaces anything: `clash` names what it would have replaced.
   */
  /**
   * @param {string} text
   * @returns {Promise<ImportPlanItem[]>}
   */
  async readImport(text) {
    /** @type {{format?: unknown, assistants?: unknown} | null} */
    let data;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new Error(`this file is not JSON (${/** @type {Error} */ (err).message}); choose a file exported from Assistants`, { cause: err });
    }
    if (data?.format !== ASSISTANTS_FORMAT || !Array.isArray(data.assistants)) {
      throw new Error(`this is not an assistants export: expected {"format": "${ASSISTANTS_FORMAT}", "assistants": [...]}`);
    }
    /** @type {({id?: unknown} & AssistantFields | null)[]} */
    const given = data.assistants;
    const checked = given.map((a, i) => {
      try {
        return normalizeAssistant({ ...a, id: crypto.randomUUID(), builtin: false, updated: 0 });
      } catch (err) {
        throw new Error(`assistants[${i}]: ${/** @type {Error} */ (err).message}`, { cause: err });
      }
    });
    const here = await this.list();
    const ids = new Set(here.map((a) => a.id));
    const names = new Set(here.map((a) => a.name));
    return checked.map((a, i) => {
      const id = given[i]?.id;
      const clash = here.find((b) => (typeof id === "string" && b.id === id) || b.name === a.name) ?? null;
      if (clash && clash.id === id && sameSettings(clash, a)) return { assistant: clash, clash, skip: true };
      if (!clash) {
        names.add(a.name);
        const keep = typeof id === "string" && id && !id.startsWith("builtin:") && !ids.has(id);
        return { assistant: keep ? { ...a, id } : a, clash: null };
      }
      let name = `${a.name} (imported)`;
      for (let n = 2; names.has(name); n += 1) name = `${a.name} (imported ${n})`;
      names.add(name);
      return { assistant: { ...a, name }, clash };
    });
  }

  /**
   * What readImport() found, written: every one a new assistant (it never replaces one).
   * @param {ImportPlanItem[]} plan
   */
  async addImported(plan) {
    plan = plan.filter((p) => !p.skip);
    const now = Date.now();
    const tx = this.db.transaction("assistants", "readwrite");
    await Promise.all([...plan.map(({ assistant }) => tx.store.add({ ...assistant, builtin: false, updated: now })),
                       tx.done]);
    return { imported: plan.length, copies: plan.filter((p) => p.clash).length };
  }
}

/**
 * Whether two assistants would run the same way (their ids, names and dates aside).
 * @param {Assistant} a
 * @param {Assistant} b
 */
function sameSettings(a, b) {
  const settings = (/** @type {Assistant} */ { id: _i, name: _n, builtin: _b, updated: _u, ...rest }) => JSON.stringify(rest);
  return settings(normalizeAssistant(a)) === settings(normalizeAssistant(b));
}

/**
 * An assistant with every field present and checked; an Error names the first bad field.
 * @param {AssistantFields} input
 * @returns {Assistant}
 */
export function normalizeAssistant(input) {
  /** @type {AssistantFields} */
  const a = { ...DEFAULTS, ...input };
  if (typeof a.name !== "string" || !a.name.trim()) throw new Error("name: an assistant needs a name");
  if (typeof a.system !== "string") throw new Error("system: the system prompt must be text");
  for (const key of /** @type {const} */ (["profile_id", "model"])) {
    if (a[key] !== null && typeof a[key] !== "string") throw new Error(`${key}: must be text or null`);
  }
  return {
    id: String(a.id), name: a.name.trim(), system: a.system,
    profile_id: /** @type {string | null} */ (a.profile_id) || null, model: /** @type {string | null} */ (a.model) || null,
    temperature: number(a.temperature, "temperature", 0, 2),
    max_tokens: integer(a.max_tokens, "max_tokens", 1),
    reasoning: reasoning(a.reasoning),
    tools: tools(a.tools),
    limits: { max_steps: integer(a.limits?.max_steps, "limits.max_steps", 1),
              token_budget: integer(a.limits?.token_budget, "limits.token_budget", 1) },
    focus: a.focus === null || a.focus === undefined ? null : Boolean(a.focus),
    interpreter: Boolean(a.interpreter),
    artifacts: a.artifacts === undefined || a.artifacts === null ? true : Boolean(a.artifacts), // kept before it existed: on
    tool_mode: toolMode(a.tool_mode),
    builtin: Boolean(a.builtin),
    updated: Number(a.updated) || 0,
  };
}

/** The settings of the next turn: the assistant's, each field replaced by the chat's own where it has one. */
/**
 * @param {Assistant | null | undefined} assistant
 * @param {Partial<Assistant> | null} [overrides]
 * @returns {Assistant}
 */
export function effectiveSettings(assistant, overrides = {}) {
  const base = assistant ?? BUILTIN_ASSISTANTS[0];
  /** @type {Record<string, unknown>} */
  const out = { ...base };
  for (const [key, value] of Object.entries(overrides ?? {})) if (key in DEFAULTS && value !== undefined) out[key] = value;
  return /** @type {Assistant} */ (out);
}

/**
 * @param {unknown} value
 * @returns {ToolMode}
 */
function toolMode(value) {
  if (value === null || value === undefined || value === "") return "direct";
  const mode = TOOL_MODES.find((m) => m === value);
  if (!mode) throw new Error(`tool_mode: must be one of ${TOOL_MODES.join(", ")}, not ${JSON.stringify(value)}`);
  return mode;
}

/**
 * @param {unknown} value
 * @param {string} field
 * @param {number} min
 * @param {number} max
 */
function number(value, field, min, max) {
  if (value === null || value === undefined || value === "") return null;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`${field}: must be a number from ${min} to ${max}, not ${JSON.stringify(value)}`);
  return n;
}

/**
 * @param {unknown} value
 * @param {string} field
 * @param {number} min
 */
function integer(value, field, min) {
  if (value === null || value === undefined || value === "") return null;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`${field}: must be a whole number of at least ${min}, not ${JSON.stringify(value)}`);
  return n;
}

/**
 * @param {AssistantFields["reasoning"]} value
 * @returns {AssistantReasoning}
 */
function reasoning(value) {
  if (value === null || value === undefined || value === "") return null;
  if (value.effort !== undefined && value.effort !== null) {
    if (typeof value.effort !== "string" || !EFFORTS.includes(value.effort)) throw new Error(`reasoning.effort: must be one of ${EFFORTS.join(", ")}`);
    return { effort: value.effort };
  }
  return { budget_tokens: integer(value.budget_tokens, "reasoning.budget_tokens", 1024) };
}

/**
 * @param {AssistantFields["tools"]} value
 * @returns {Assistant["tools"]}
 */
function tools(value) {
  const mcp = value?.mcp ?? "all";
  if (mcp !== "all" && !(Array.isArray(mcp) && mcp.every((id) => typeof id === "string"))) {
    throw new Error('tools.mcp: "all" or a list of MCP server ids');
  }
  return { mcp: mcp === "all" ? "all" : [...mcp], python: value?.python === undefined || value.python === null || Boolean(value.python) };
}
