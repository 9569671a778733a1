/**
 * A reply's words as they are read aloud (app/voice.js): without markdown's signs, and cut into sentences so the
 * first is heard while the rest still streams.
 *
 *   speakable("**Hi** `x`", "(code)") -> "Hi x"
 *   sentencesOf("One. Two! Thr") -> {sentences: ["One.", "Two!"], rest: " Thr"}
 */

/**
 * A reply's text as it is heard: no markdown signs, code blocks named (`codeBlock`) instead of spelled out, links
 * by their words.
 * @param {string} text
 * @param {string} codeBlock
 */
export function speakable(text, codeBlock) {
  return text
    .replace(/```[\s\S]*?(```|$)/g, ` ${codeBlock} `)
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`([^`]*)`/g, "$1")
    .replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d+\.)\s+/gm, "")
    .replace(/[*_~|]+/g, " ")
    .replace(/[ \t]+/g, " ")
    .trim();
}

/**
 * Sentences, each ending at its full stop (. ! ? and their Japanese forms) or line; the rest is kept for later.
 * @param {string} text
 * @returns {{sentences: string[], rest: string}}
 */
export function sentencesOf(text) {
  const sentences = [];
  // a sentence: anything but an end, where a dot no space follows (3.14, e.g.) is no end; then its end
  const ends = /(?:[^.!?。！？\n]|[.!?](?!\s))*(?:[.!?](?=\s)|[。！？]|\n)/gy;
  let match;
  let at = 0;
  while ((match = ends.exec(text)) !== null && match[0]) {
    sentences.push(match[0].trim());
    at = ends.lastIndex;
  }
  return { sentences: sentences.filter(Boolean), rest: text.slice(at) };
}
