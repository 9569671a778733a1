/**
 * Export and import of conversations.
 *
 *   exportConversations(store, ids | null, "json" | "markdown") -> Promise<Blob>   (null = all)
 *   importConversations(store, fileOrText) -> Promise<{imported, copied, skipped, conversation_ids}>
 *   validateExport(data) -> problems: string[]      (empty = valid)
 *   class ImportError extends Error { problems: string[] }
 *
 * JSON format (version 1), media type application/json:
 *   {"format": "orizuru.conversations", "version": 1, "exported_at": ISO 8601 string,
 *    "conversations": [{"id", "title", "created", "updated", "current_leaf", "focus"?,
 *        "messages": [{"id", "parent_id", "role": "user"|"assistant", "parts": [unified Message parts],
 *                      "status": "complete"|"interrupted"|"error", "created",
 *                      "vendor"?, "model"?, "usage"?, "finish_reason"?, "error"?, "finished"?}]}]}
 *   Times are milliseconds since 1970. Parts are pycore's Message parts as JSON (text, image with
 *   base64 data, reasoning, tool_call, tool_result). A reply still streaming is exported as it
 *   stands, marked "interrupted". Only transcripts and focus state are exported: no profile, no
 *   settings and no API key — the text is checked against every key this tab holds (keys.js) and
 *   any that a user pasted into a message is replaced by "[API key removed]".
 *
 * Import: the whole file is validated first, against EXPORT_SCHEMA (its parts: the contract's JSON Schema,
 * web/contract.js PART_SCHEMA; checked by json_schema.js), then its tree (ids, parents, cycles); an older
 * build's tool_meta is upgraded first (repair.js). Any problem throws ImportError naming each problem by
 * its path (e.g. `conversations[0].messages[3].role: ...`) and nothing is written. Then everything is
 * written in ONE transaction with add() (never put), so nothing existing is ever overwritten. Id
 * policy for a conversation whose id, or any of whose message ids, is already in this browser:
 *   - the stored conversation already holds every message of the imported one -> skipped;
 *   - otherwise -> imported as a copy under fresh ids (parent links and current leaf remapped).
 */

import { redactSecrets, containsSecret } from "./keys.js";
import { branchPath, isToolResults } from "./tree.js";
import { ROLES, STATUSES } from "./schema.js";
import { withoutToolMeta } from "./repair.js";
import { PART_SCHEMA } from "../contract.js";
import { schemaProblems, show } from "./json_schema.js";

/** @typedef {import("./transcripts.js").StoredMessage} StoredMessage */
/** @typedef {import("./transcripts.js").Conversation} Conversation */
/** @typedef {import("./transcripts.js").Store} Store */
/** @typedef {Omit<StoredMessage, "conversation_id">} ExportedMessage */
/** @typedef {Conversation & {focus?: unknown, messages: ExportedMessage[]}} ExportedConversation */
/**
 * A file in this format, once it is checked (validateExport).
 * @typedef {{format: string, version: number, exported_at?: string, conversations: ExportedConversation[]}} ExportFile
 */
/** @typedef {{conversation: Conversation, messages: StoredMessage[], focus?: unknown}} Loaded */
/** @typedef {{imported: number, copied: number, skipped: number, conversation_ids: string[]}} ImportResult */

export const EXPORT_FORMAT = "orizuru.conversations";
export const EXPORT_VERSION = 1;
const MAX_LISTED_PROBLEMS = 8;

export class ImportError extends Error {
  /** @param {string[]} problems */
  constructor(problems) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS).join("; ");
    const more = problems.length > MAX_LISTED_PROBLEMS ? ` (and ${problems.length - MAX_LISTED_PROBLEMS} more)` : "";
    super(`This file can't be imported, nothing was changed: ${listed}${more}`);
    this.name = "ImportError";
    this.problems = problems;
  }
}

// ------------------------------------------------------------ export

/**
 * @param {Store} store
 * @param {string[] | null} ids
 * @param {"json" | "markdown"} [format]
 * @returns {Promise<Blob>}
 */
export async function exportConversations(store, ids, format = "json") {
  const wanted = ids ?? (await store.listConversations()).map((/** @type {Conversation} */ c) => c.id);
  // Read side by side: one conversation after another waits on every read in turn (bench/history).
  const loaded = await Promise.all(wanted.map(async (id) => {
    const data = /** @type {Loaded | null} */ (await store.loadConversation(id));
    if (!data) throw new Error(`no conversation with id ${id}`);
    return data;
  }));
  let text;
  let type;
  if (format === "json") {
    text = JSON.stringify({ format: EXPORT_FORMAT, version: EXPORT_VERSION, exported_at: new Date().toISOString(),
      conversations: loaded.map(exportRecord) }, null, 1);
    type = "application/json";
  } else if (format === "markdown") {
    text = loaded.map(toMarkdown).join("\n\n---\n\n");
    type = "text/markdown";
  } else {
    throw new Error(`unknown export format ${JSON.stringify(format)}; use "json" or "markdown"`);
  }
  text = redactSecrets(text);
  if (containsSecret(text)) throw new Error("export refused: an API key would have been included");
  return new Blob([text], { type: `${type};charset=utf-8` });
}

/**
 * @param {Loaded} loaded
 * @returns {ExportedConversation}
 */
function exportRecord({ conversation, messages, focus }) {
  const { id, title, created, updated, current_leaf } = conversation;
  /** @type {Omit<ExportedConversation, "messages">} */
  const record = { id, title, created, updated, current_leaf: current_leaf ?? null };
  for (const key of /** @type {const} */ (["pinned", "folder", "assistant_id", "overrides"])) {
    if (conversation[key] != null) Object.assign(record, { [key]: conversation[key] });
  }
  if (focus !== undefined) record.focus = focus;
  return { ...record, messages: messages.map(({ conversation_id: _c, ...m }) => ({
    ...m,
    parent_id: m.parent_id ?? null,
    status: m.status === "streaming" ? "interrupted" : m.status,
  })) };
}

/** @param {Loaded} loaded */
function toMarkdown({ conversation, messages }) {
  const leaf = conversation.current_leaf ?? messages.at(-1)?.id;
  const lines = [`# ${conversation.title}`, ""];
  for (const m of branchPath(messages, leaf)) {
    // A tool's results travel as a "user" message (as the vendors have it), but the reader did not write them.
    const who = isToolResults(m) ? "Tool output" : m.role === "user" ? "You"
      : `Assistant${m.model ? ` · ${m.vendor ? `${m.vendor}/` : ""}${m.model}` : ""}`;
    lines.push(`## ${who}`, "");
    if (m.status === "interrupted" || m.status === "streaming") lines.push("_(reply cut off)_", "");
    if (m.status === "error" && m.error?.message) lines.push(`_(error: ${m.error.message})_`, "");
    for (const part of m.parts ?? []) lines.push(partMarkdown(part), "");
  }
  return lines.join("\n").trimEnd() + "\n";
}

/** @param {import("../types/contract").Part} part */
function partMarkdown(part) {
  switch (part.type) {
    case "text":
      return part.text;
    case "reasoning":
      return (part.text || "(reasoning hidden)").split("\n").map((l) => `> ${l}`).join("\n");
    case "tool_call":
      return `**Tool call** \`${part.name}\`\n\n${fence(JSON.stringify(part.arguments ?? {}, null, 2), "json")}`;
    case "tool_result": {
      const body = (part.content ?? []).map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");
      return `**Tool result**${part.is_error ? " (error)" : ""}\n\n${fence(body)}`;
    }
    case "image":
      return `_[image: ${part.mime_type}]_`;
    case "document":
      return `_[file: ${part.name} (${part.mime_type})]_`;
    default:
      return `_[${/** @type {{type: string}} */ (part).type}]_`;
  }
}

/**
 * @param {string} text
 * @param {string} [lang]
 */
function fence(text, lang = "") {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((t) => t.length));
  const ticks = "`".repeat(longest + 1);
  return `${ticks}${lang}\n${text}\n${ticks}`;
}

// ------------------------------------------------------------ validation

const TIME = { type: "number", minimum: 0, description: "a time in ms" };
const ID = { type: "string", minLength: 1, description: "a non-empty string" };
const { $defs: PART_DEFS, ...PART } = PART_SCHEMA;

/**
 * The file's shape as a JSON Schema: the parts are the contract's (pycore.messages.Part, generated into
 * web/contract.js), the rest is this format's. What a schema cannot say (ids unique, parents in the same
 * conversation, no cycles) is checked after it.
 */
export const EXPORT_SCHEMA = Object.freeze({
  $defs: {
    ...PART_DEFS,
    Part: PART,
    Message: {
      type: "object", required: ["id", "parent_id", "role", "status", "created", "parts"],
      properties: { id: ID, parent_id: { anyOf: [{ type: "null" }, { ...ID, description: "a message id" }] },
                    role: { enum: ROLES }, status: { enum: STATUSES }, created: TIME,
                    parts: { type: "array", items: { $ref: "#/$defs/Part" } } },
    },
    Conversation: {
      type: "object", required: ["id", "title", "created", "updated", "messages"],
      properties: { id: ID, title: { type: "string" }, created: TIME, updated: TIME,
                    pinned: { type: "boolean" }, folder: { anyOf: [{ type: "null" }, { type: "string" }] },
                    current_leaf: { anyOf: [{ type: "null" }, ID] },
                    messages: { type: "array", items: { $ref: "#/$defs/Message" } } },
    },
  },
  type: "object", required: ["format", "version", "conversations"],
  properties: { format: { const: EXPORT_FORMAT }, version: { type: "integer", minimum: 1 },
                conversations: { type: "array", items: { $ref: "#/$defs/Conversation" } } },
});

/**
 * @param {unknown} data
 * @returns {string[]}   what is wrong, each named by its place (empty: a valid file)
 */
export function validateExport(data) {
  if (!isObject(data)) return ["the file is not a JSON object"];
  const { version } = /** @type {{version?: unknown}} */ (data);
  if (typeof version === "number" && Number.isInteger(version) && version > EXPORT_VERSION) {
    return [`version: ${version} is newer than this Orizuru understands (${EXPORT_VERSION}); update Orizuru`];
  }
  const problems = schemaProblems(data, EXPORT_SCHEMA, "").map((problem) => problem.replace(/^\./, ""));
  return problems.length ? problems : treeProblems(/** @type {ExportFile} */ (data).conversations);
}

/**
 * Ids used once in the file, parents within their conversation, no message its own ancestor.
 * @param {ExportedConversation[]} conversations
 */
function treeProblems(conversations) {
  /** @type {string[]} */
  const problems = [];
  /**
   * @param {string} path
   * @param {string} what
   */
  const bad = (path, what) => problems.push(`${path}: ${what}`);
  const conversationIds = new Set();
  const messageIds = new Set();
  conversations.forEach((c, ci) => {
    const at = `conversations[${ci}]`;
    if (conversationIds.has(c.id)) bad(`${at}.id`, `${show(c.id)} appears twice in the file`);
    conversationIds.add(c.id);
    /** @type {Map<string, ExportedMessage>} */
    const ids = new Map();
    c.messages.forEach((m, mi) => {
      if (messageIds.has(m.id)) bad(`${at}.messages[${mi}].id`, `${show(m.id)} appears twice in the file`);
      messageIds.add(m.id);
      ids.set(m.id, m);
    });
    c.messages.forEach((m, mi) => {
      if (m.parent_id !== null && !ids.has(m.parent_id)) {
        bad(`${at}.messages[${mi}].parent_id`, `${show(m.parent_id)} is not a message of this conversation`);
      }
    });
    findCycles(ids).forEach((id) => bad(`${at}.messages`, `message ${show(id)} is its own ancestor`));
    if (c.current_leaf !== null && c.current_leaf !== undefined && !ids.has(c.current_leaf)) {
      bad(`${at}.current_leaf`, `${show(c.current_leaf)} is not a message of this conversation`);
    }
  });
  return problems;
}

/** @param {Map<string, {parent_id: string | null}>} ids */
function findCycles(ids) {
  const looped = [];
  for (const start of ids.keys()) {
    const seen = new Set();
    for (let id = /** @type {string | null | undefined} */ (start); id && ids.has(id); id = ids.get(id)?.parent_id) {
      if (seen.has(id)) {
        looped.push(start);
        break;
      }
      seen.add(id);
    }
  }
  return looped;
}

/** @param {unknown} v @returns {v is Record<string, unknown>} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

// ------------------------------------------------------------ import

/**
 * @param {Store} store
 * @param {string | Blob} fileOrText
 * @returns {Promise<ImportResult>}
 */
export async function importConversations(store, fileOrText) {
  const data = parseExport(typeof fileOrText === "string" ? fileOrText : await fileOrText.text());
  /** @type {ImportResult} */
  const result = { imported: 0, copied: 0, skipped: 0, conversation_ids: [] };
  const plan = await planImport(store.db, data.conversations, result);
  for (const c of plan) { // the bytes of attachments go to OPFS before the one transaction (blobs.js)
    c.messages = await Promise.all(c.messages.map(async (m) => ({ ...m, parts: await store.blobs.offload(m.parts) })));
  }
  await writeImport(store.db, plan, result);
  store.channel.post({ type: "import", conversation_ids: result.conversation_ids });
  return result;
}

/**
 * The file's export, or an ImportError naming every place that is wrong.
 * @param {string} text
 * @returns {ExportFile}
 */
function parseExport(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ImportError([`the file is not valid JSON (${err instanceof Error ? err.message : err})`]);
  }
  const problems = validateExport(upgraded(data));
  if (problems.length) throw new ImportError(problems);
  return data;
}

/**
 * An export of an older build, as this one writes it (repair.js: tool cards on their result parts).
 * @param {unknown} data
 */
function upgraded(data) {
  const conversations = isObject(data) ? data.conversations : undefined;
  for (const c of Array.isArray(conversations) ? conversations : []) {
    if (isObject(c) && Array.isArray(c.messages)) c.messages = c.messages.map((m) => (isObject(m) ? withoutToolMeta(m) : m));
  }
  return data;
}

/**
 * What comes in: a conversation already here is skipped, one whose ids clash comes in as a copy.
 * @param {import("./schema.js").Database} db
 * @param {ExportedConversation[]} conversations
 * @param {ImportResult} result
 */
async function planImport(db, conversations, result) {
  const plan = [];
  for (const c of conversations) {
    const existing = await db.get("conversations", c.id);
    const clashes = await Promise.all(c.messages.map((m) => db.get("messages", m.id)));
    const taken = existing || clashes.some(Boolean);
    const alreadyHere = existing && clashes.every((m) => m && m.conversation_id === c.id);
    if (alreadyHere) {
      result.skipped++;
      continue;
    }
    plan.push(taken ? withFreshIds(c) : c);
    result[taken ? "copied" : "imported"]++;
  }
  return plan;
}

/**
 * The whole plan in one transaction: all of it comes in, or nothing does.
 * @param {import("./schema.js").Database} db
 * @param {ExportedConversation[]} plan
 * @param {ImportResult} result
 */
async function writeImport(db, plan, result) {
  const tx = db.transaction(["conversations", "messages", "focus"], "readwrite");
  const done = tx.done;
  done.catch(() => {});
  const ignore = () => {}; // a failed add fails the transaction, which `done` reports
  try {
    for (const c of plan) {
      const { messages, focus, ...conversation } = c;
      tx.objectStore("conversations").add({ ...conversation, current_leaf: conversation.current_leaf ?? null }).catch(ignore);
      for (const m of messages) {
        const status = m.status === "streaming" ? "interrupted" : m.status; // no writer comes with a file
        tx.objectStore("messages").add({ ...m, conversation_id: c.id, status }).catch(ignore);
      }
      if (focus !== undefined) tx.objectStore("focus").add({ conversation_id: c.id, state: focus }).catch(ignore);
      result.conversation_ids.push(c.id);
    }
    await done;
  } catch (err) {
    const reason = /** @type {{name?: string, message?: string} | null} */ (tx.error ?? err);
    throw new Error(`Import failed and nothing was changed: ${reason?.name ?? "Error"}: ${reason?.message ?? reason}`, { cause: err });
  }
}

/**
 * @param {ExportedConversation} c
 * @returns {ExportedConversation}
 */
function withFreshIds(c) {
  const ids = new Map(c.messages.map((m) => [m.id, crypto.randomUUID()]));
  const fresh = (/** @type {string} */ id) => /** @type {string} */ (ids.get(id));
  return {
    ...c,
    id: crypto.randomUUID(),
    current_leaf: c.current_leaf ? fresh(c.current_leaf) : null,
    messages: c.messages.map((m) => ({ ...m, id: fresh(m.id), parent_id: m.parent_id ? fresh(m.parent_id) : null })),
  };
}
