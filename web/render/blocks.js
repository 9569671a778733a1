/**
 * Where a streaming markdown text stops being final: which of marked's top-level tokens can no
 * longer change however the text goes on.
 *
 *   openBlockIndex(tokens) -> i    tokens[0..i) are finished; tokens[i..] are the open tail
 *
 * Rules (each one guards a case found by streaming real replies split at every boundary):
 *  1. The last non-blank block is open: more text can extend it (a paragraph, list, table, fence).
 *  2. If that block's first line is incomplete, the block before it is open too: the new block's
 *     type is still a guess ("* **" reads as a rule until "* **Bold" makes it an item of the list
 *     above). The same holds for a math block (math.js) whose closing line is incomplete: "$$" then
 *     more text on that line makes it part of the paragraph above again.
 *  Raw HTML, which could open an element in one block and close it in a later one, is text here
 *  (parse.js), so no block depends on a later one that way.
 *  Link reference definitions, the one non-local construct left, are handled by the renderer.
 */

/** @typedef {import("marked").Token} Token */

/**
 * @param {Token[]} tokens
 * @param {number} end
 */
function lastBlockBefore(tokens, end) {
  for (let i = end - 1; i >= 0; i -= 1) if (tokens[i].type !== "space") return i;
  return -1;
}

/** @param {Token[]} tokens */
export function openBlockIndex(tokens) {
  let open = lastBlockBefore(tokens, tokens.length);
  const last = tokens[open];
  const unsettled = last && (!last.raw.includes("\n") || (last.type === "mathBlock" && !last.raw.endsWith("\n")));
  if (open > 0 && unsettled) open = lastBlockBefore(tokens, open);
  return Math.max(open, 0);
}
