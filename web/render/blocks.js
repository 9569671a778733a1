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
 *  3. Raw HTML that opens an element in one block and closes it in a later one (<details> ... a code
 *     fence ... </details>) is one piece of HTML to the browser: the blocks from the opening tag on
 *     stay open until the element is closed, unless that span grows past MAX_HTML_SPAN characters
 *     (an element that is never closed must not make every update re-render the rest of the reply).
 *  Link reference definitions, the one other non-local construct, are handled by the renderer.
 */

export const MAX_HTML_SPAN = 16 * 1024;

const VOID_OR_OPTIONAL_END = new Set([
  "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
  "p", "li", "dt", "dd", "option", "rp", "rt",
]);
const TAG = /<(\/?)([a-zA-Z][\w-]*)(?:[^>"']|"[^"]*"|'[^']*')*?(\/?)>/g;

function lastBlockBefore(tokens, end) {
  for (let i = end - 1; i >= 0; i -= 1) if (tokens[i].type !== "space") return i;
  return -1;
}

/** Feed the raw HTML inside `token` (block or inline) through a stack of open element names. */
function trackHtml(token, stack) {
  if (token.type === "html") {
    for (const [, closing, name, selfClosing] of token.text.matchAll(TAG)) {
      const tag = name.toLowerCase();
      if (VOID_OR_OPTIONAL_END.has(tag) || selfClosing) continue;
      if (!closing) stack.push(tag);
      else if (stack.includes(tag)) stack.length = stack.lastIndexOf(tag);
    }
    return;
  }
  for (const child of token.tokens ?? []) trackHtml(child, stack);
  for (const item of token.items ?? []) trackHtml(item, stack);
  if (token.type === "table") {
    for (const cell of token.header) trackHtml(cell, stack);
    for (const row of token.rows) for (const cell of row) trackHtml(cell, stack);
  }
}

export function openBlockIndex(tokens) {
  let open = lastBlockBefore(tokens, tokens.length);
  const last = tokens[open];
  const unsettled = last && (!last.raw.includes("\n") || (last.type === "mathBlock" && !last.raw.endsWith("\n")));
  if (open > 0 && unsettled) open = lastBlockBefore(tokens, open);
  if (open <= 0) return 0;
  const stack = [];
  let balanced = 0;
  let span = 0;
  for (let i = 0; i < open; i += 1) {
    trackHtml(tokens[i], stack);
    if (stack.length === 0) {
      balanced = i + 1;
      span = 0;
    } else {
      span += tokens[i].raw.length;
    }
  }
  return span > MAX_HTML_SPAN ? open : balanced;
}
