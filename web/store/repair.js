/**
 * Repairs of tree shapes that older builds stored; loadConversation applies them (and saves the result).
 *
 *   planRepair(conversation, messages) -> {messages, currentLeaf, moved: [StoredMessage], removed: [id]} | null
 *       null when there is nothing to repair; otherwise the messages as they should be, the current
 *       leaf, the messages whose parent changed and the ids of the messages to delete.
 *
 * Empty progress steps (issue 16, defect 2). Builds before the fix opened an empty reply for a tool's
 * progress notification: it was stored as an empty assistant message beside the tool results, and the
 * next step of the reply became its child:
 *
 *     assistant (tool calls) ─┬─ assistant (no parts, interrupted) ── assistant (the answer) ...
 *                             └─ user (the tool results)             ← the current leaf
 *
 * so the answer was on a branch no ‹ › control reached. The repair moves the empty message's children
 * under the tool results they follow, deletes the empty message, and moves a current leaf that was the
 * empty message, or that now has children, down to the newest leaf below it:
 *
 *     assistant (tool calls) ── user (the tool results) ── assistant (the answer) ...
 *
 * Only that shape is touched: an empty reply anywhere else (Stop before the first byte) stays as it is.
 *
 *   withoutToolMeta(message) -> message      a tool-results message as older builds stored it, upgraded
 *
 * Tool cards kept beside the results (issue 30). Builds before it kept what a card shows in a table on the
 * results message, `tool_meta`: {call id: {duration_ms, denied, stopped, structured, schema_problem, links,
 * source, app: {server, uri, tool, arguments, result}, asked, files}}. Each call's entry becomes its result
 * part's `display` (pycore.messages.ToolDisplay): the resource links, which the part for the model names only
 * as text, join the part's items as the card drew them (or the app's result, the server's items as sent).
 * Records are upgraded as they are read (loadConversation, the blob sweep) and files as they are imported.
 */

import { toMcpContent } from "./reduce.js";

/**
 * @typedef {Omit<import("./tree.js").TreeMessage, "parts"> & {parts: import("../types/contract").Part[],
 *   status?: string, error?: unknown}} RepairMessage   what a repair reads of a stored message
 */
/**
 * @template {RepairMessage} M
 * @param {{current_leaf?: string | null} | null | undefined} conversation
 * @param {M[]} messages
 * @returns {{messages: M[], currentLeaf: string | null, moved: M[], removed: string[]} | null}
 */
export function planRepair(conversation, messages) {
  const byId = new Map(messages.map((m) => [m.id, m]));
  const kids = childrenIndex(messages);
  /** @type {Map<string, string | null>} */
  const parentOf = new Map(messages.map((m) => [m.id, m.parent_id ?? null]));
  /** @type {Set<string>} */
  const removed = new Set();
  /** @type {Map<string, string>} */
  const movedTo = new Map(); // message id -> its new parent id
  for (const msg of messages) {
    if (!isEmptyStep(msg)) continue;
    const results = resultsBeside((msg.parent_id ? byId.get(msg.parent_id) : undefined), kids);
    if (!results) continue;
    removed.add(msg.id);
    for (const child of kids.get(msg.id) ?? []) {
      movedTo.set(child.id, results.id);
      parentOf.set(child.id, results.id);
    }
  }
  if (!removed.size) return null;

  const repaired = messages.filter((m) => !removed.has(m.id))
    .map((m) => (movedTo.has(m.id) ? { ...m, parent_id: movedTo.get(m.id) } : m));
  const after = childrenIndex(repaired);
  let leaf = conversation?.current_leaf ?? null;
  if (leaf && removed.has(leaf)) leaf = parentOf.get(leaf) ?? null;
  for (let next = newest(after.get(leaf)); leaf && next; next = newest(after.get(leaf))) leaf = next.id;
  return {
    messages: repaired,
    currentLeaf: leaf,
    moved: repaired.filter((m) => movedTo.has(m.id)),
    removed: [...removed],
  };
}

/** @param {RepairMessage} msg */
function isEmptyStep(msg) {
  return msg.role === "assistant" && Array.isArray(msg.parts) && msg.parts.length === 0 && !msg.error &&
    (msg.status === "interrupted" || msg.status === "complete");
}

/** The tool-results message that answers `call`'s tool calls (the newest, if there are several). */
/**
 * @template {RepairMessage} M
 * @param {M | undefined} call
 * @param {Map<string | null, M[]>} kids
 */
function resultsBeside(call, kids) {
  if (call?.role !== "assistant") return null;
  const ids = new Set(call.parts.flatMap((p) => (p.type === "tool_call" ? [p.id] : [])));
  if (!ids.size) return null;
  const results = (kids.get(call.id) ?? []).filter((m) => m.role === "user" && m.parts.length > 0 &&
    m.parts.every((p) => p.type === "tool_result") && m.parts.some((p) => p.type === "tool_result" && ids.has(p.call_id)));
  return newest(results);
}

/**
 * @template {RepairMessage} M
 * @param {M[]} messages
 * @returns {Map<string | null, M[]>} parent id -> its children
 */
function childrenIndex(messages) {
  /** @type {Map<string | null, M[]>} */
  const kids = new Map();
  for (const m of messages) {
    const key = m.parent_id ?? null;
    const list = kids.get(key) ?? [];
    list.push(m);
    kids.set(key, list);
  }
  return kids;
}

/**
 * @template {RepairMessage} M
 * @param {M[] | undefined} list
 * @returns {M | null}
 */
function newest(list) {
  if (!list?.length) return null;
  return list.reduce((a, b) => ((b.created ?? 0) >= (a.created ?? 0) ? b : a));
}

/**
 * @template {object | null | undefined} M   a stored or imported message (any shape: an old build wrote it)
 * @param {M} message
 * @returns {M}   the same without `tool_meta`, each entry on its result part's display
 */
export function withoutToolMeta(message) {
  const stored = /** @type {{tool_meta?: unknown, parts?: unknown} | null | undefined} */ (message);
  const meta = stored?.tool_meta;
  if (!stored || meta === undefined) return message;
  const { tool_meta: _old, ...upgraded } = stored;
  if (!meta || typeof meta !== "object" || !Array.isArray(stored.parts)) return /** @type {M} */ (upgraded);
  const entries = /** @type {Record<string, unknown>} */ (meta);
  upgraded.parts = /** @type {unknown[]} */ (stored.parts).map((part) => {
    if (!isObject(part) || part.type !== "tool_result") return part;
    const entry = entries[String(part.call_id)];
    return isObject(entry)
      ? { ...part, display: { ...displayOf(part, entry), .../** @type {object | null | undefined} */ (part.display) } }
      : part;
  });
  return /** @type {M} */ (upgraded);
}

const KEPT = ["duration_ms", "structured", "schema_problem", "source", "stopped", "denied", "asked", "files"];

/**
 * A call's `tool_meta` entry as its result part's display (pycore.messages.ToolDisplay).
 * @param {Record<string, unknown>} part   the tool_result part
 * @param {Record<string, unknown>} old    its entry
 * @returns {Record<string, unknown>}
 */
function displayOf(part, old) {
  /** @type {Record<string, unknown>} */
  const display = Object.fromEntries(KEPT.filter((key) => old[key] !== undefined && old[key] !== null)
    .map((key) => [key, old[key]]));
  const links = Array.isArray(old.links) ? old.links : [];
  const sent = isObject(old.app) && isObject(old.app.result) ? old.app.result.content : undefined;
  const items = /** @type {import("../types/contract").ToolResultPart["content"]} */ (part.content);
  const content = sent ?? (links.length ? [...toMcpContent(items), ...links] : null);
  if (Array.isArray(content)) display.content = content;
  if (isObject(old.app)) {
    const { server, uri, tool, arguments: args = {} } = old.app;
    display.app = { server, uri, tool, arguments: args };
  }
  return display;
}

/**
 * @param {unknown} v
 * @returns {v is Record<string, unknown>}
 */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
