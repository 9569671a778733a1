/**
 * The message tree of one conversation: stored messages linked by parent_id (edits and regenerations make
 * siblings). The one model of it, for the store and the page.
 *
 *   const tree = new ConversationTree(messages)   // StoredMessage[] from the store
 *   tree.path()            the messages shown, root to leaf, following the chosen branch at each fork
 *                          (the newest child where nothing was chosen)
 *   tree.add(msg)          a new message; it becomes the chosen branch at its fork
 *   tree.choose(msg)       show the branch through msg
 *   tree.siblings(msg)     {index, count} for the ‹ 1/2 › switcher
 *   tree.step(msg, ±1)     switch to the previous / next sibling
 *   tree.promptOf(msg)     the user message a reply answers
 *   branchPath(messages, leafId)   first message ... leaf: the branch a stored current_leaf names
 */

const ROOT = "\u0000root";

/**
 * What the tree reads of a message; a stored message (transcripts.js) has these and more, and the tree hands
 * back the messages it was given, of their own type.
 * @typedef {{id: string, parent_id?: string | null, created?: number, role: string, parts: {type: string}[]}}
 *   TreeMessage
 */

/** @template {TreeMessage} [M=TreeMessage] */
export class ConversationTree {
  /** @param {M[]} [messages] */
  constructor(messages = []) {
    /** @type {Map<string, M>} */
    this.byId = new Map();
    /** @type {Map<string, string[]>} parent id (ROOT for the first messages) -> children's ids, oldest first */
    this.children = new Map();
    /** @type {Map<string, string>} parent id -> the child whose branch is shown */
    this.chosen = new Map();
    for (const msg of [...messages].sort(byCreated)) this.#insert(msg);
  }

  /** @param {M} msg */
  #insert(msg) {
    this.byId.set(msg.id, msg);
    const key = msg.parent_id ?? ROOT;
    const kids = this.children.get(key) ?? [];
    if (!kids.includes(msg.id)) kids.push(msg.id);
    this.children.set(key, kids);
  }

  /** @param {M} msg */
  add(msg) {
    this.#insert(msg);
    this.chosen.set(msg.parent_id ?? ROOT, msg.id);
    return msg;
  }

  /** @param {M} msg */
  update(msg) {
    const known = this.byId.get(msg.id);
    if (known) this.byId.set(msg.id, { ...known, ...msg });
    else this.add(msg);
  }

  /** @param {string} id */
  get(id) {
    return this.byId.get(id);
  }

  /** @returns {M[]} */
  path() {
    /** @type {M[]} */
    const out = [];
    let key = ROOT;
    for (;;) {
      const kids = this.children.get(key);
      if (!kids?.length) return out;
      const id = this.chosen.get(key) ?? kids[kids.length - 1];
      out.push(/** @type {M} */ (this.byId.get(id))); // every child id was inserted with its message
      key = id;
    }
  }

  last() {
    const path = this.path();
    return path[path.length - 1] ?? null;
  }

  /** @param {M} msg */
  siblings(msg) {
    const kids = this.children.get(msg.parent_id ?? ROOT) ?? [msg.id];
    return { index: kids.indexOf(msg.id) + 1, count: kids.length };
  }

  /**
   * Show the branch through `msg`: it becomes the chosen one at its fork (below it, the newest).
   * @param {M} msg
   */
  choose(msg) {
    this.chosen.set(msg.parent_id ?? ROOT, msg.id);
  }

  /**
   * @param {M} msg
   * @param {number} delta
   */
  step(msg, delta) {
    const key = msg.parent_id ?? ROOT;
    const kids = this.children.get(key) ?? [];
    const next = kids[kids.indexOf(msg.id) + delta];
    if (next) this.chosen.set(key, next);
    return next;
  }

  /**
   * The user message a reply answers: the nearest ancestor the person typed (not tool results).
   * @param {M} msg
   * @returns {M | null}
   */
  promptOf(msg) {
    /** @type {M | undefined} */
    let cur = msg;
    while (cur && !(cur.role === "user" && !isToolResults(cur))) cur = this.byId.get(cur.parent_id ?? ROOT);
    return cur ?? null;
  }
}

/**
 * @param {TreeMessage} a
 * @param {TreeMessage} b
 */
function byCreated(a, b) {
  return (a.created ?? 0) - (b.created ?? 0);
}

/**
 * @template {TreeMessage} M
 * @param {M[]} messages
 * @param {string | null | undefined} leafId
 * @returns {M[]}
 */
export function branchPath(messages, leafId) {
  const byId = new Map(messages.map((m) => [m.id, m]));
  /** @type {M[]} */
  const path = [];
  const seen = new Set();
  for (let m = byId.get(leafId ?? ROOT); m && !seen.has(m.id); m = byId.get(m.parent_id ?? ROOT)) {
    seen.add(m.id);
    path.push(m);
  }
  return path.reverse();
}

/** @param {TreeMessage} msg */
export function isToolResults(msg) {
  return msg.role === "user" && msg.parts.length > 0 && msg.parts.every((p) => p.type === "tool_result");
}
