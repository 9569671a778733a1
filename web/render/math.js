/**
 * Math in model output, kept exactly as the model wrote it: a marked extension (parse.js uses it)
 * that takes math spans and blocks out of markdown's hands before escapes and emphasis can touch them.
 *
 *   new Marked({ extensions: MATH_EXTENSIONS, hooks: { emStrongMask: maskMathForEmphasis } })
 *   new MathAwareLexer(options)           // a marked Lexer that lets the hook see the unmasked text
 *   renderMath(token) -> HTML string       // how a math token is shown (the one place to change)
 *
 * Recognised (the delimiters models use):
 *   inline   `$…$` (pandoc's rule, so prices stay text: no space just inside either `$`, no digit
 *            right after the closing one), `\(…\)`; and the display forms inside a line
 *   display  `$$…$$` and `\[…\]`; as a block when they start a line (up to three spaces in) and the
 *            closing delimiter ends one; a block may span lines but never a blank line
 *   Everything else stays markdown: `\$` is an escaped dollar, code spans and fences win over math.
 *
 * Tokens: {type: "math" (inside a paragraph) | "mathBlock", raw: the source as written, text: the TeX
 * between the delimiters, display: boolean}.
 *
 * Rendered by KaTeX (self-hosted, bundled) as MathML, which the browser lays out itself: no KaTeX
 * stylesheet, fonts or inline styles are needed, so the page's CSP (style-src 'self') holds and the
 * sanitizer (sanitize.js) only has to let MathML elements through. KaTeX runs with trust off (\href,
 * \url, \htmlData... show as red text, never as links or attributes), strict errors ignored, and
 * limits on macro expansion and sizes, so hostile TeX can neither reach the page nor hang it. A formula
 * KaTeX refuses shows its source and KaTeX's message (class math-error), never a blank. Results are
 * cached: a paragraph still streaming is rendered again at each update, its formulas are not.
 * Wrapped in <span class="math math-inline">, <span class="math math-display"> or <div class="math
 * math-display"> (sanitize.js keeps these class names).
 *
 * Streaming (blocks.js): a block never spans a blank line, and it is final once its closing line has
 * ended; blocks.js keeps the block before a math block open until then (text after the closing `$$`
 * on the same line would make the whole thing part of that paragraph again).
 */
import katex from "katex";
import { Lexer } from "marked";

import { escapeHtml } from "./highlight.js";

const KATEX_OPTIONS = Object.freeze({
  output: "mathml", throwOnError: true, trust: false, strict: "ignore", maxExpand: 500, maxSize: 50,
});
const CACHE_LIMIT = 500;
/** @type {Map<string, string>} */
const cache = new Map(); // "d" | "i" + TeX -> HTML, oldest first

// A line break inside a block, but never a blank line (a blank line ends any block).
const NO_BLANK_LINE = String.raw`\n(?![ \t]*(?:\n|$))`;
const BLOCK_DOLLARS = new RegExp(String.raw`^ {0,3}\$\$((?:\\[^\n]|[^\\$\n]|\$(?!\$)|${NO_BLANK_LINE})+?)\$\$[ \t]*(?:\n|$)`);
const BLOCK_BRACKETS = new RegExp(String.raw`^ {0,3}\\\[((?:[^\n]|${NO_BLANK_LINE})+?)\\\][ \t]*(?:\n|$)`);
// marked calls start() with the text after the current position: only a "\n" marks a line start in it.
const BLOCK_CANDIDATE = /\n {0,3}(?:\$\$|\\\[)/g;

const INLINE = [
  { display: true, pattern: /^\$\$((?:\\[\s\S]|[^\\$]|\$(?!\$))+?)\$\$/ },
  { display: true, pattern: /^\\\[([\s\S]+?)\\\]/ },
  { display: false, pattern: /^\\\(([\s\S]+?)\\\)/ },
  // pandoc: `$` then no space, content, no space then `$`, and no digit after it ($5 or $10 is text).
  { display: false, pattern: /^\$(?![\s$])((?:\\[\s\S]|[^\\$])*?(?:\\[\s\S]|[^\s\\$]))\$(?!\d)/ },
];
const INLINE_CANDIDATE = /\$|\\[([]/;

/**
 * A math token as marked's extensions make it: `mathBlock` (a block of its own) or `math` (inline).
 * @typedef {{type: string, raw: string, text: string, display: boolean}} MathToken
 */

/**
 * @param {string} src
 * @returns {MathToken | undefined}
 */
function matchBlock(src) {
  const match = BLOCK_DOLLARS.exec(src) ?? BLOCK_BRACKETS.exec(src);
  if (!match || !match[1].trim()) return undefined; // marked's "no match"
  return { type: "mathBlock", raw: match[0], text: match[1].trim(), display: true };
}

/**
 * @param {string} src
 * @returns {MathToken | undefined}
 */
function matchInline(src) {
  for (const { display, pattern } of INLINE) {
    const match = pattern.exec(src);
    if (match && match[1].trim()) return { type: "math", raw: match[0], text: match[1].trim(), display };
  }
  return undefined;
}

/** @param {import("marked").Tokens.Generic} generic a token matchBlock or matchInline made */
export function renderMath(generic) {
  const token = /** @type {MathToken} */ (generic);
  const kind = token.display ? "math-display" : "math-inline";
  const inner = typeset(token);
  return token.type === "mathBlock" ? `<div class="math ${kind}">${inner}</div>\n` : `<span class="math ${kind}">${inner}</span>`;
}

/**
 * KaTeX's MathML for the token, or its source and KaTeX's message when KaTeX refuses it.
 * @param {MathToken} token
 */
function typeset(token) {
  const key = (token.display ? "d" : "i") + token.text;
  let html = cache.get(key);
  if (html === undefined) {
    try {
      html = katex.renderToString(token.text, { ...KATEX_OPTIONS, displayMode: token.display });
    } catch (error) {
      const message = String(/** @type {{message?: unknown}} */ (Object(error)).message ?? error).replace(/^KaTeX parse error: /, "");
      html = `<span class="math-error"><code>${escapeHtml(token.raw.trim())}</code> ` +
        `<span class="math-error-message">${escapeHtml(message)}</span></span>`;
    }
    const oldest = cache.keys().next();
    if (cache.size >= CACHE_LIMIT && !oldest.done) cache.delete(oldest.value);
  } else {
    cache.delete(key); // most recently used last
  }
  cache.set(key, html);
  return html;
}

/** @type {import("marked").TokenizerAndRendererExtension[]} */
export const MATH_EXTENSIONS = [
  {
    name: "mathBlock",
    level: "block",
    // Where a block could start, so that it interrupts a paragraph: only where one really does, or
    // the paragraph would be cut in two at a line that merely starts with `$$` (marked's contract).
    /** @param {string} src */
    start(src) {
      for (const candidate of src.matchAll(BLOCK_CANDIDATE)) {
        const at = candidate.index + 1;
        if (matchBlock(src.slice(at))) return at;
      }
      return undefined;
    },
    tokenizer: matchBlock,
    renderer: renderMath,
  },
  {
    name: "math",
    level: "inline",
    /** @param {string} src */
    start(src) {
      const at = src.search(INLINE_CANDIDATE);
      return at < 0 ? undefined : at;
    },
    tokenizer: matchInline,
    renderer: renderMath,
  },
];

// The text of the inlineTokens() call in progress: marked hands the emStrongMask hook only its
// masked copy, in which `\(` and `\$` have both become "++".
/** @type {string | null} */
let inlineSource = null;

/** A marked Lexer whose emphasis search sees math spans as opaque (with maskMathForEmphasis). */
export class MathAwareLexer extends Lexer {
  /**
   * @param {string} src
   * @param {import("marked").Token[]} [tokens]
   * @returns {import("marked").Token[]}
   */
  inlineTokens(src, tokens) {
    const outer = inlineSource;
    inlineSource = src;
    try {
      return super.inlineTokens(src, tokens);
    } finally {
      inlineSource = outer;
    }
  }
}

/**
 * marked's emStrongMask hook: marked looks for the closing `*`/`_` of emphasis in a masked copy of the
 * text (code spans and escapes hidden); hide the delimiters inside math too, so `*see $a*b$ here*`
 * does not close the emphasis inside the math. Math starts where the copy still has the `$`, or
 * "++" for `\(`/`\[` (an escape outside code), exactly where the tokenizer will find it.
 */
/** @param {string} masked */
export function maskMathForEmphasis(masked) {
  const src = inlineSource;
  if (src === null || src.length !== masked.length || !INLINE_CANDIDATE.test(src)) return masked;
  let out = "";
  let done = 0;
  for (let i = 0; i < src.length; i += 1) {
    const dollar = src[i] === "$" && masked[i] === "$";
    const bracket = src[i] === "\\" && (src[i + 1] === "(" || src[i + 1] === "[") && masked.startsWith("++", i);
    if (!dollar && !bracket) continue;
    const token = matchInline(src.slice(i));
    if (!token) continue;
    const end = i + token.raw.length;
    out += masked.slice(done, i) + masked.slice(i, end).replace(/[*_~]/g, "+");
    done = end;
    i = end - 1;
  }
  return done === 0 ? masked : out + masked.slice(done);
}
