/**
 * Markdown text -> HTML strings: lexing, parsing and highlighting, with no DOM (markdown.js turns
 * the HTML into sanitized DOM).
 *
 *   lex(text, knownLinks) -> tokens           marked's top-level tokens (tokens.links: definitions),
 *                                             with math kept as written (math.js)
 *   tokensToHtml(tokens, {deferHighlighting}) -> string
 *                                             marked's HTML with code highlighted (NOT sanitized:
 *                                             it must go through sanitize.js before the DOM); with
 *                                             deferHighlighting, code in a known language is left
 *                                             plain for lazy_highlight.js (class "language-NAME", no "hljs")
 *   collectDefinitions(tokens, into) -> into  link reference definitions, nested ones too (first wins)
 *   nextWindowEnd(text, from, limit, budget)  where an update that may take `budget` more characters stops
 *   finishedPrefix(tokens, links) -> i        tokens[0..i) may be frozen (blocks.js + definitions rule)
 *
 * Raw HTML is text (SECURITY.md T-X15, as ChatGPT and Claude show it): marked's HTML tokenizers (block
 * `html`, inline `tag`) are turned off, so `<module>`, `<details>` or an unclosed `<!--` are read as
 * the paragraph text they stand in, escaped like any text, and the markdown around and inside them
 * still renders; code spans, fences, autolinks and math, tokenized by their own rules, keep their `<`.
 * A half-written tag while streaming is text too. The only markup in the HTML is what marked, KaTeX
 * and highlight.js write (sanitize.js still checks all of it).
 */
import { Marked, Parser } from "marked";

import { openBlockIndex } from "./blocks.js";
import { escapeHtml, highlightCode, isKnownLanguage } from "./highlight.js";
import { MATH_EXTENSIONS, maskMathForEmphasis, MathAwareLexer } from "./math.js";

/**
 * @typedef {import("marked").Token} Token
 * @typedef {import("marked").TokensList} TokensList
 * @typedef {import("marked").Links} Links   link reference definitions by label
 */

const CLASS_SAFE_LANGUAGE = /^[\w+#.-]{1,40}$/;

let deferring = false; // set only for the duration of one tokensToHtml() call

const markdown = new Marked({
  gfm: true,
  breaks: false,
  // Math is kept as written (math.js): tokenized before escapes and emphasis can change it.
  extensions: MATH_EXTENSIONS,
  hooks: { emStrongMask: maskMathForEmphasis },
  // A tokenizer that returns undefined matches nothing (false would fall back to marked's own).
  tokenizer: { html: () => undefined, tag: () => undefined },
  renderer: {
    html: ({ text }) => escapeHtml(text), // none are made (above); were one made, it is text too
    code({ text, lang }) {
      const requested = /^\S*/.exec(lang ?? "")?.[0] ?? ""; // always matches (possibly empty)
      if (deferring && isKnownLanguage(requested)) {
        return `<pre><code class="language-${requested.toLowerCase()}">${escapeHtml(text.replace(/\n$/, ""))}\n</code></pre>\n`;
      }
      const { html, language } = highlightCode(text.replace(/\n$/, ""), requested);
      let attrs = "";
      if (language) attrs = ` class="hljs language-${language}"`;
      else if (CLASS_SAFE_LANGUAGE.test(requested)) attrs = ` class="language-${requested}"`;
      return `<pre><code${attrs}>${html}\n</code></pre>\n`;
    },
  },
});
const OPTIONS = markdown.defaults;

/**
 * @param {string} text
 * @param {Links} knownLinks
 * @returns {TokensList}
 */
export function lex(text, knownLinks) {
  const lexer = new MathAwareLexer(OPTIONS);
  Object.assign(lexer.tokens.links, knownLinks);
  return lexer.lex(text);
}

/**
 * @param {Token[]} tokens
 * @param {{deferHighlighting?: boolean}} [options]
 * @returns {string}
 */
export function tokensToHtml(tokens, { deferHighlighting = false } = {}) {
  deferring = deferHighlighting;
  try {
    return Parser.parse(tokens, OPTIONS);
  } finally {
    deferring = false;
  }
}

/**
 * Link reference definitions found in tokens, nested ones included (first definition wins).
 * @param {Token[]} tokens
 * @param {Links} into
 * @returns {Links}
 */
export function collectDefinitions(tokens, into) {
  for (const token of tokens) {
    if (token.type === "def") {
      if (!(token.tag in into)) into[token.tag] = { href: token.href, title: token.title };
    } else if (token.type === "list") {
      for (const item of token.items) collectDefinitions(item.tokens, into);
    } else if (token.type === "blockquote") {
      collectDefinitions(token.tokens ?? [], into);
    }
  }
  return into;
}

/**
 * The end of the text an update lexes when it may take at most `budget` characters beyond `limit`
 * (the end lexed last time; `from` is where lexing starts): cut at a line end when one is near.
 */
/**
 * @param {string} text
 * @param {number} from
 * @param {number} limit
 * @param {number} budget
 */
export function nextWindowEnd(text, from, limit, budget) {
  let end = text.length;
  if (end - Math.max(limit, from) > budget) {
    end = Math.max(limit, from) + budget;
    const lineEnd = text.lastIndexOf("\n", end - 1);
    if (lineEnd >= limit) end = lineEnd + 1;
  }
  return end;
}

/**
 * How many leading tokens can be frozen: blocks.js's rule, and no definition still being written.
 * @param {TokensList} tokens
 * @param {Links} links
 */
export function finishedPrefix(tokens, links) {
  const open = openBlockIndex(tokens);
  // A definition still being written must not leak into blocks we are about to freeze.
  const settled = collectDefinitions(tokens.slice(0, open), Object.assign(Object.create(null), links));
  return Object.keys(tokens.links).some((tag) => !(tag in settled)) ? 0 : open;
}
