// What an MCP App view may send, and how it is counted: one source for both places that enforce it (SECURITY.md
// T-W9), the page (web/mcp_app/view.js imports this module) and the view's outer frame (web/mcp_app/frame.html,
// a self-contained page with its own policy: the build writes this file into its script, `export` taken off).
// Keep it plain: no imports, nothing but these declarations.

export const MESSAGE_LIMIT = 8 * 2 ** 20; // one message
export const SECOND_LIMIT = 16 * 2 ** 20; // in one second

/**
 * How big a message is (string lengths, bytes of binary data, 8 a value), counted until it passes `limit`.
 * @param {unknown} value
 * @param {number} limit
 * @returns {number}
 */
export function messageSize(value, limit) {
  let size = 0;
  /** @type {unknown[]} */
  const stack = [value];
  while (stack.length && size <= limit) {
    const item = stack.pop();
    if (typeof item === "string") size += item.length;
    else if (item instanceof ArrayBuffer || ArrayBuffer.isView(item)) size += item.byteLength;
    else if (item && typeof item === "object") {
      for (const key in item) {
        size += key.length + 8;
        if (size > limit) break;
        stack.push(/** @type {Record<string, unknown>} */ (item)[key]);
      }
    } else size += 8;
  }
  return size;
}
