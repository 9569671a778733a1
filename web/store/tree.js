/**
 * The message tree of one conversation (pure functions over StoredMessage arrays).
 *
 *   branchPath(messages, leafId) -> [StoredMessage]   first message ... leaf (the branch on show)
 *   childrenOf(messages, parentId) -> [StoredMessage] in creation order (parentId null = first messages)
 *   siblingsOf(messages, messageId) -> {siblings, index}   for "< 2/3 >" branch navigation
 *   deepestLeaf(messages, fromId) -> id               follow the newest child down (after switching branch)
 */

export function branchPath(messages, leafId) {
  const byId = new Map(messages.map((m) => [m.id, m]));
  const path = [];
  const seen = new Set();
  for (let m = byId.get(leafId); m && !seen.has(m.id); m = byId.get(m.parent_id)) {
    seen.add(m.id);
    path.push(m);
  }
  return path.reverse();
}

export function childrenOf(messages, parentId) {
  return messages.filter((m) => (m.parent_id ?? null) === (parentId ?? null)).sort(byCreated);
}

export function siblingsOf(messages, messageId) {
  const me = messages.find((m) => m.id === messageId);
  if (!me) return { siblings: [], index: -1 };
  const siblings = childrenOf(messages, me.parent_id);
  return { siblings, index: siblings.findIndex((m) => m.id === messageId) };
}

export function deepestLeaf(messages, fromId) {
  let id = fromId;
  for (;;) {
    const kids = childrenOf(messages, id);
    if (kids.length === 0) return id;
    id = kids[kids.length - 1].id;
  }
}

function byCreated(a, b) {
  return a.created - b.created || (a.id < b.id ? -1 : 1);
}
