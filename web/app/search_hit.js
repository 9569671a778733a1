/**
 * A conversation opened from a search result shows the message that matched, marked: the message gets the
 * class "search-hit" and the query's words in its text are put in <mark> (text nodes only, nothing parsed).
 * The marks last until the transcript is drawn again.
 *
 *   markHit(transcript, messageId, query) -> the message's element, or null when it is not on screen
 *                                          (a tool's result is drawn inside the reply that asked for it)
 */

import { marked } from "./sidebar.js";

/**
 * @param {HTMLElement} transcript
 * @param {string} messageId
 * @param {string} query
 * @returns {HTMLElement | null}
 */
export function markHit(transcript, messageId, query) {
  // A message is a bubble, a reply, or a later step inside the reply of its turn.
  /** @type {HTMLElement[]} */
  const messages = [...transcript.querySelectorAll(":scope > li, :scope > li .step")]
    .filter((at) => at instanceof HTMLElement);
  const el = messages.find((at) => at.dataset.id === messageId);
  if (!el) return null;
  el.classList.add("search-hit");
  const content = el.querySelector(".content") ?? el;
  const walker = document.createTreeWalker(content, NodeFilter.SHOW_TEXT);
  /** @type {Text[]} */
  const texts = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) texts.push(/** @type {Text} */ (node));
  for (const node of texts) {
    const pieces = marked(node.data, query);
    if (Array.isArray(pieces) && pieces.some((piece) => typeof piece !== "string")) node.replaceWith(...pieces);
  }
  return el;
}
