/**
 * Messages as the page sends them (the tree itself is web/store/tree.js):
 *
 *   textOf(msg)            the text a message shows
 *   toWireMessages(path)   the path as pycore Messages for chat.run (see docs/PROTOCOL.md)
 */

export { ConversationTree, isToolResults } from "../store/tree.js";

/**
 * @typedef {import("../types/contract").Part} Part
 * @typedef {{role: "user" | "assistant", parts: Part[]}} WireMessage   a pycore Message, its parts always there
 */

/** @param {{parts: Part[]}} msg */
export function textOf(msg) {
  return msg.parts.map((p) => (p.type === "text" && !p.refusal ? p.text : "")).join("");
}

/**
 * The path as the vendor must see it: empty and failed replies dropped, tool calls that never got a
 * result dropped (a cut-off step), results without their cards' display, neighbours of the same role merged so
 * every vendor accepts it.
 */
/**
 * @param {{role: "user" | "assistant", parts: Part[]}[]} path
 * @returns {WireMessage[]}
 */
export function toWireMessages(path) {
  /** @type {Set<string>} */
  const answered = new Set();
  for (const msg of path) for (const p of msg.parts) if (p.type === "tool_result") answered.add(p.call_id);
  /** @type {WireMessage[]} */
  const out = [];
  for (const msg of path) {
    // A result's display is its card's (files, answers to a server): the core does not need it, the model never gets it.
    const parts = msg.parts.filter((p) => p.type !== "tool_call" || answered.has(p.id))
      .map((p) => (p.type === "tool_result" && p.display ? withoutDisplay(p) : p));
    if (!parts.length) continue;
    const prev = out[out.length - 1];
    if (prev && prev.role === msg.role) prev.parts.push(...parts);
    else out.push({ role: msg.role, parts: [...parts] });
  }
  return out;
}

/**
 * @param {import("../types/contract").ToolResultPart} part
 * @returns {import("../types/contract").ToolResultPart}
 */
function withoutDisplay({ display: _card, ...part }) {
  return part;
}
