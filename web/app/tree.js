/**
 * One conversation as a tree of stored messages (edits and regenerations make siblings), and the
 * path through it that is on screen.
 *
 *   const tree = new ConversationTree(messages)   // StoredMessage[] from the store
 *   tree.path()            the messages shown, root to leaf, following the chosen branch at each fork
 *   tree.add(msg)          a new message; it becomes the chosen branch at its fork
 *   tree.siblings(msg)     {index, count} for the ‹ 1/2 › switcher
 *   tree.step(msg, ±1)     switch to the previous / next sibling
 *   toWireMessages(path)   the path as pycore Messages for chat.run (see docs/PROTOCOL.md)
 */

const ROOT = "\u0000root";

export class ConversationTree {
  constructor(messages = []) {
    this.byId = new Map();
    this.children = new Map();
    this.chosen = new Map();
    for (const msg of [...messages].sort(byCreated)) this.#insert(msg);
  }

  #insert(msg) {
    this.byId.set(msg.id, msg);
    const key = msg.parent_id ?? ROOT;
    const kids = this.children.get(key) ?? [];
    if (!kids.includes(msg.id)) kids.push(msg.id);
    this.children.set(key, kids);
  }

  add(msg) {
    this.#insert(msg);
    this.chosen.set(msg.parent_id ?? ROOT, msg.id);
    return msg;
  }

  update(msg) {
    if (this.byId.has(msg.id)) this.byId.set(msg.id, { ...this.byId.get(msg.id), ...msg });
    else this.add(msg);
  }

  get(id) {
    return this.byId.get(id);
  }

  path() {
    const out = [];
    let key = ROOT;
    for (;;) {
      const kids = this.children.get(key);
      if (!kids?.length) return out;
      const id = this.chosen.get(key) ?? kids[kids.length - 1];
      out.push(this.byId.get(id));
      key = id;
    }
  }

  last() {
    const path = this.path();
    return path[path.length - 1] ?? null;
  }

  siblings(msg) {
    const kids = this.children.get(msg.parent_id ?? ROOT) ?? [msg.id];
    return { index: kids.indexOf(msg.id) + 1, count: kids.length };
  }

  step(msg, delta) {
    const key = msg.parent_id ?? ROOT;
    const kids = this.children.get(key) ?? [];
    const next = kids[kids.indexOf(msg.id) + delta];
    if (next) this.chosen.set(key, next);
    return next;
  }

  /** The user message a reply answers: the nearest ancestor the person typed (not tool results). */
  promptOf(msg) {
    let cur = msg;
    while (cur && !(cur.role === "user" && !isToolResults(cur))) cur = this.byId.get(cur.parent_id);
    return cur ?? null;
  }
}

function byCreated(a, b) {
  return (a.created ?? 0) - (b.created ?? 0);
}

export function isToolResults(msg) {
  return msg.role === "user" && msg.parts.length > 0 && msg.parts.every((p) => p.type === "tool_result");
}

export function textOf(msg) {
  return msg.parts.filter((p) => p.type === "text" && !p.refusal).map((p) => p.text).join("");
}

/**
 * The path as the vendor must see it: empty and failed replies dropped, tool calls that never got a
 * result dropped (a cut-off step), neighbours of the same role merged so every vendor accepts it.
 */
export function toWireMessages(path) {
  const answered = new Set();
  for (const msg of path) for (const p of msg.parts) if (p.type === "tool_result") answered.add(p.call_id);
  const out = [];
  for (const msg of path) {
    const parts = msg.parts.filter((p) => p.type !== "tool_call" || answered.has(p.id));
    if (!parts.length) continue;
    const prev = out[out.length - 1];
    if (prev && prev.role === msg.role) prev.parts.push(...parts);
    else out.push({ role: msg.role, parts: [...parts] });
  }
  return out;
}
