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
 * Import: the whole file is validated first; any problem throws ImportError naming each problem by
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
import { PART_TYPES } from "../contract.js";

export const EXPORT_FORMAT = "orizuru.conversations";
export const EXPORT_VERSION = 1;
const MAX_LISTED_PROBLEMS = 8;

export class ImportError extends Error {
  constructor(problems) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS).join("; ");
    const more = problems.length > MAX_LISTED_PROBLEMS ? ` (and ${problems.length - MAX_LISTED_PROBLEMS} more)` : "";
    super(`This file can't be imported, nothing was changed: ${listed}${more}`);
    this.name = "ImportError";
    this.problems = problems;
  }
}

// ------------------------------------------------------------ export

export async function exportConversations(store, ids, format = "json") {
  const wanted = ids ?? (await store.listConversations()).map((c) => c.id);
  // Read side by side: one conversation after another waits on every read in turn (bench/history).
  const loaded = await Promise.all(wanted.map(async (id) => {
    const data = await store.loadConversation(id);
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

function exportRecord({ conversation, messages, focus }) {
  const { id, title, created, updated, current_leaf } = conversation;
  const record = { id, title, created, updated, current_leaf: current_leaf ?? null };
  for (const key of ["pinned", "folder", "assistant_id", "overrides"]) if (conversation[key] != null) record[key] = conversation[key];
  if (focus !== undefined) record.focus = focus;
  record.messages = messages.map(({ conversation_id: _c, ...m }) => ({
    ...m,
    parent_id: m.parent_id ?? null,
    status: m.status === "streaming" ? "interrupted" : m.status,
  }));
  return record;
}

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

function partMarkdown(part) {
  switch (part.type) {
    case "text":
      return part.text;
    case "reasoning":
      return (part.text || "(reasoning hidden)").split("\n").map((l) => `> ${l}`).join("\n");
    case "tool_call":
      return `**Tool call** \`${part.name}\`\n\n${fence(JSON.stringify(part.arguments ?? {}, null, 2), "json")}`;
    case "tool_result": {
      const body = (part.content ?? []).map((c) => (typeof c.text === "string" ? c.text : `[${c.type}]`)).join("\n");
      return `**Tool result**${part.is_error ? " (error)" : ""}\n\n${fence(body)}`;
    }
    case "image":
      return `_[image: ${part.mime_type}]_`;
    case "document":
      return `_[file: ${part.name} (${part.mime_type})]_`;
    default:
      return `_[${part.type}]_`;
  }
}

function fence(text, lang = "") {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((t) => t.length));
  const ticks = "`".repeat(longest + 1);
  return `${ticks}${lang}\n${text}\n${ticks}`;
}

// ------------------------------------------------------------ validation

export function validateExport(data) {
  const problems = [];
  const bad = (path, what) => problems.push(`${path}: ${what}`);
  if (!isObject(data)) return ["the file is not a JSON object"];
  if (data.format !== EXPORT_FORMAT) bad("format", `expected "${EXPORT_FORMAT}", got ${show(data.format)}`);
  if (!Number.isInteger(data.version)) bad("version", `expected a number, got ${show(data.version)}`);
  else if (data.version > EXPORT_VERSION) {
    bad("version", `${data.version} is newer than this Orizuru understands (${EXPORT_VERSION}); update Orizuru`);
  }
  else if (data.version < 1) bad("version", `${data.version} is not a valid version`);
  if (!Array.isArray(data.conversations)) {
    bad("conversations", `expected a list, got ${show(data.conversations)}`);
    return problems;
  }
  const conversationIds = new Set();
  const messageIds = new Set();
  data.conversations.forEach((c, ci) => {
    const at = `conversations[${ci}]`;
    if (!isObject(c)) return bad(at, "expected an object");
    if (!nonEmptyString(c.id)) bad(`${at}.id`, `expected a non-empty string, got ${show(c.id)}`);
    else if (conversationIds.has(c.id)) bad(`${at}.id`, `${show(c.id)} appears twice in the file`);
    else conversationIds.add(c.id);
    if (typeof c.title !== "string") bad(`${at}.title`, `expected a string, got ${show(c.title)}`);
    if (c.pinned !== undefined && typeof c.pinned !== "boolean") bad(`${at}.pinned`, `expected true or false, got ${show(c.pinned)}`);
    if (c.folder != null && typeof c.folder !== "string") bad(`${at}.folder`, `expected a folder name, got ${show(c.folder)}`);
    for (const k of ["created", "updated"]) if (!isTime(c[k])) bad(`${at}.${k}`, `expected a time in ms, got ${show(c[k])}`);
    if (!Array.isArray(c.messages)) return bad(`${at}.messages`, `expected a list, got ${show(c.messages)}`);
    const ids = new Map();
    c.messages.forEach((m, mi) => {
      const mat = `${at}.messages[${mi}]`;
      if (!isObject(m)) return bad(mat, "expected an object");
      if (!nonEmptyString(m.id)) bad(`${mat}.id`, `expected a non-empty string, got ${show(m.id)}`);
      else if (messageIds.has(m.id)) bad(`${mat}.id`, `${show(m.id)} appears twice in the file`);
      else {
        messageIds.add(m.id);
        ids.set(m.id, m);
      }
      if (!ROLES.includes(m.role)) bad(`${mat}.role`, `expected "user" or "assistant", got ${show(m.role)}`);
      if (!STATUSES.includes(m.status)) bad(`${mat}.status`, `expected one of ${STATUSES.join(", ")}, got ${show(m.status)}`);
      if (!isTime(m.created)) bad(`${mat}.created`, `expected a time in ms, got ${show(m.created)}`);
      if (m.parent_id !== null && !nonEmptyString(m.parent_id)) {
        bad(`${mat}.parent_id`, `expected null or a message id, got ${show(m.parent_id)}`);
      }
      if (!Array.isArray(m.parts)) return bad(`${mat}.parts`, `expected a list, got ${show(m.parts)}`);
      m.parts.forEach((p, pi) => validatePart(p, `${mat}.parts[${pi}]`, bad));
    });
    c.messages.forEach((m, mi) => {
      if (!isObject(m) || !nonEmptyString(m.parent_id)) return;
      if (!ids.has(m.parent_id)) bad(`${at}.messages[${mi}].parent_id`, `${show(m.parent_id)} is not a message of this conversation`);
    });
    findCycles(ids).forEach((id) => bad(`${at}.messages`, `message ${show(id)} is its own ancestor`));
    if (c.current_leaf !== null && c.current_leaf !== undefined && !ids.has(c.current_leaf)) {
      bad(`${at}.current_leaf`, `${show(c.current_leaf)} is not a message of this conversation`);
    }
  });
  return problems;
}

function validatePart(p, at, bad) {
  if (!isObject(p)) return bad(at, "expected an object");
  if (!PART_TYPES.includes(p.type)) return bad(`${at}.type`, `expected one of ${PART_TYPES.join(", ")}, got ${show(p.type)}`);
  const need = (k, test, what) => test(p[k]) || bad(`${at}.${k}`, `expected ${what}, got ${show(p[k])}`);
  if (p.type === "text") need("text", (v) => typeof v === "string", "a string");
  if (p.type === "reasoning" && p.text !== undefined) need("text", (v) => typeof v === "string", "a string");
  if (p.type === "image") {
    need("data", (v) => typeof v === "string" && /^[A-Za-z0-9+/=_-]*$/.test(v), "base64 text");
    need("mime_type", (v) => typeof v === "string" && /^image\/[\w.+-]+$/.test(v), "an image media type");
  }
  if (p.type === "document") {
    need("name", nonEmptyString, "a file name");
    need("mime_type", (v) => typeof v === "string" && /^[\w.+-]+\/[\w.+-]+$/.test(v), "a media type");
    if (p.text !== undefined) need("text", (v) => typeof v === "string", "a string");
    if (p.data !== undefined) need("data", (v) => typeof v === "string" && /^[A-Za-z0-9+/=_-]*$/.test(v), "base64 text");
    if (p.text === undefined && p.data === undefined) bad(at, "a document needs its text or its data");
  }
  if (p.type === "tool_call") {
    need("id", (v) => typeof v === "string", "a string");
    need("name", nonEmptyString, "a tool name");
    need("arguments", isObject, "an object");
  }
  if (p.type === "tool_result") {
    need("call_id", (v) => typeof v === "string", "a string");
    need("content", Array.isArray, "a list");
  }
}

function findCycles(ids) {
  const looped = [];
  for (const start of ids.keys()) {
    const seen = new Set();
    for (let id = start; id && ids.has(id); id = ids.get(id).parent_id) {
      if (seen.has(id)) {
        looped.push(start);
        break;
      }
      seen.add(id);
    }
  }
  return looped;
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const nonEmptyString = (v) => typeof v === "string" && v.length > 0;
const isTime = (v) => typeof v === "number" && Number.isFinite(v) && v >= 0;

function show(v) {
  if (v === undefined) return "nothing";
  const text = JSON.stringify(v);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

// ------------------------------------------------------------ import

export async function importConversations(store, fileOrText) {
  const data = parseExport(typeof fileOrText === "string" ? fileOrText : await fileOrText.text());
  const result = { imported: 0, copied: 0, skipped: 0, conversation_ids: [] };
  const plan = await planImport(store.db, data.conversations, result);
  for (const c of plan) { // the bytes of attachments go to OPFS before the one transaction (blobs.js)
    c.messages = await Promise.all(c.messages.map(async (m) => ({ ...m, parts: await store.blobs.offload(m.parts) })));
  }
  await writeImport(store.db, plan, result);
  store.channel.post({ type: "import", conversation_ids: result.conversation_ids });
  return result;
}

/** The file's export, or an ImportError naming every place that is wrong. */
function parseExport(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ImportError([`the file is not valid JSON (${err.message})`]);
  }
  const problems = validateExport(upgraded(data));
  if (problems.length) throw new ImportError(problems);
  return data;
}

/** An export of an older build, as this one writes it (repair.js: tool cards on their result parts). */
function upgraded(data) {
  for (const c of Array.isArray(data?.conversations) ? data.conversations : []) {
    if (isObject(c) && Array.isArray(c.messages)) c.messages = c.messages.map((m) => (isObject(m) ? withoutToolMeta(m) : m));
  }
  return data;
}

/** What comes in: a conversation already here is skipped, one whose ids clash comes in as a copy. */
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

/** The whole plan in one transaction: all of it comes in, or nothing does. */
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
    const reason = tx.error ?? err;
    throw new Error(`Import failed and nothing was changed: ${reason?.name ?? "Error"}: ${reason?.message ?? reason}`, { cause: err });
  }
}

function withFreshIds(c) {
  const ids = new Map(c.messages.map((m) => [m.id, crypto.randomUUID()]));
  return {
    ...c,
    id: crypto.randomUUID(),
    current_leaf: c.current_leaf ? ids.get(c.current_leaf) : null,
    messages: c.messages.map((m) => ({ ...m, id: ids.get(m.id), parent_id: m.parent_id ? ids.get(m.parent_id) : null })),
  };
}
