/**
 * Markdown from a model, rendered safely and incrementally while it streams.
 *
 *   import { StreamRenderer, ImagePolicy, renderMarkdown } from "./render/markdown.js";
 *
 *   const images = new ImagePolicy(savedHosts, (hosts) => save(hosts));
 *   const view = new StreamRenderer(element, { images, labels });
 *   view.append(delta);        // as each text delta arrives; rendering is batched per animation frame
 *   view.flush();              // optional: render what has arrived now, not at the next frame
 *   view.finish();             // the stream ended (or was stopped): final render, synchronous
 *   view.setText(fullText);    // replace everything (a stored message); synchronous
 *   view.destroy();            // stop pending work; the rendered content stays in `element`
 *   renderMarkdown(element, text, { images, labels });   // one-shot, synchronous
 *
 *   The container gets class "markdown" (render.css styles it) and must be used by this renderer only.
 *   labels (all optional, English defaults): {copy, copied, copyFailed, loadImage: (host) => string,
 *            alwaysLoadImages: (host) => string, imageNotShown, imageFailed: (host) => string,
 *            tooLongToFormat: (length, limit) => string, couldNotFormat}
 *
 * Text the parser must not be given, or that it fails on, is shown as written (SECURITY.md T-Z2):
 * past MAX_MARKDOWN_CHARS characters the whole text is shown as plain text in a <pre class="md-plain">
 * under a note (<p class="md-plain-note">), and so is any text whose rendering throws (marked's
 * recursive lexer overflows the stack on a few hundred thousand nested "> ", for one). The text is set
 * with textContent: nothing in it is parsed. Once plain, a streaming renderer stays plain and adds each
 * new piece of text as a text node (cheap: nothing is lexed again); setText() starts over. No method of
 * StreamRenderer and no renderMarkdown() call throws because of the text: a reply is always shown and
 * its stream always ends.
 *
 * How streaming stays cheap and flicker-free: marked's lexer splits the text into top-level blocks.
 * The blocks that can no longer change (blocks.js says which: all but the last one, with two
 * exceptions) are rendered once into their own DOM nodes, which are never touched again. Only the
 * open tail (the last block, e.g. a half-written table or an unclosed code fence) is lexed and
 * rendered again on each update, and updates are batched per animation frame, so the work per frame
 * is proportional to the open block, not to the whole reply. The streamed DOM is the same as a
 * one-shot render of the full text (the tests check this at every step for many random splits).
 * The one cross-block feature, link reference definitions (`[r]: url`), is handled explicitly:
 * a definition applies only once it is in a finished block, and finished blocks that mention its
 * label are then rendered again, as a one-shot render would show them.
 * When text arrives faster than frames can show it (thousands of tokens per second), the blocks
 * frozen to catch up are inserted with their code not yet highlighted: lazy_highlight.js highlights
 * each such block when it comes near the viewport (the same DOM an eager render gives, sanitized the
 * same way). Highlighting is most of the cost of rendering code, and blocks that scroll by unseen
 * while a reply pours in need none of it then. ("Never touched again" holds for the block's own
 * nodes; its <code> element's children are replaced once, by that highlighting.)
 *
 * Safety: every piece of HTML goes through DOMPurify (sanitize.js) on every update before it
 * touches the page; links are http/https/mailto only with target="_blank" rel="noopener noreferrer";
 * images load only from hosts the user allowed (images.js); code is highlighted by highlight.js
 * (highlight.js) and gets a Copy button (code_blocks.js). Raw HTML in markdown is shown as text,
 * never as markup (parse.js), so nothing a model writes can hide the rest of its reply. Math
 * (`$…$`, `\(…\)`, `$$…$$`, `\[…\]`) is typeset by KaTeX from exactly what was written (math.js).
 */
import { addCodeToolbars, DEFAULT_CODE_LABELS } from "./code_blocks.js";
import { DEFAULT_IMAGE_LABELS, ImagePolicy, placeImages } from "./images.js";
import { highlightWhenSeen } from "./lazy_highlight.js";
import { renderDiagrams } from "./diagrams.js";
import { collectDefinitions, finishedPrefix, lex, nextWindowEnd, tokensToHtml } from "./parse.js";
import { sanitizeToFragment } from "./sanitize.js";

export { ImagePolicy };

// Longer text is not formatted but shown plain (see above). No model writes this much in one reply
// (128K output tokens are about 500 KB), and marked lexes a megabyte of ordinary text in well under a
// second; its stack gives out somewhere past 8 MB of it.
export const MAX_MARKDOWN_CHARS = 1024 * 1024;

/**
 * @typedef {{tooLongToFormat: (length: number, limit: number) => string, couldNotFormat: string}} PlainLabels
 * @typedef {import("./code_blocks.js").CodeLabels & import("./images.js").ImageLabels & PlainLabels} MarkdownLabels
 * @typedef {{images?: ImagePolicy, labels?: Partial<MarkdownLabels>}} MarkdownOptions
 * @typedef {{raw: string, nodes: ChildNode[]}} FrozenBlock   a finished block and the nodes it put on the page
 */

/** @type {PlainLabels} */
const DEFAULT_PLAIN_LABELS = {
  tooLongToFormat: (length, limit) => `Too long to format (${length.toLocaleString("en")} characters; `
    + `the limit is ${limit.toLocaleString("en")}): shown as plain text.`,
  couldNotFormat: "This text could not be formatted: it is shown as plain text.",
};

// Most new text one update takes on (characters): bounds the work per update when text arrives
// faster than frames.
const UPDATE_BUDGET = 3000;
// Frame updates (re-rendering the open tail) run at most every FRAME_UPDATE_INTERVAL_MS, and after
// an update that took t ms not before t * FRAME_UPDATE_COST_RATIO ms have passed: a model streaming
// a few tokens per frame is shown ~30 times a second, and a long open block (a big table or code
// block re-rendered whole at each update) never takes more than about a fifth of the main thread.
const FRAME_UPDATE_INTERVAL_MS = 30;
const FRAME_UPDATE_COST_RATIO = 5;

/**
 * @param {Partial<MarkdownLabels>} labels
 * @returns {MarkdownLabels}
 */
function withDefaults(labels) {
  return { ...DEFAULT_CODE_LABELS, ...DEFAULT_IMAGE_LABELS, ...DEFAULT_PLAIN_LABELS, ...labels };
}

/**
 * HTML from parse.js -> sanitized, decorated fragment ready to insert. Insert it before the next one.
 * @param {string} html
 * @param {ImagePolicy} images
 * @param {MarkdownLabels} labels
 */
function toFragment(html, images, labels) {
  const fragment = sanitizeToFragment(html);
  placeImages(fragment, images, labels);
  addCodeToolbars(fragment, labels);
  return fragment;
}

/**
 * A fragment's top-level nodes; an empty text node stands in for a block that renders nothing.
 * @param {DocumentFragment} fragment
 */
function nodesOf(fragment) {
  if (!fragment.firstChild) fragment.append(document.createTextNode(""));
  return [...fragment.childNodes];
}

/** @param {string} text */
const normalLabel = (text) => text.toLowerCase().replace(/\s+/g, " ");

/**
 * The text as written, under a note saying why: `failed` (rendering threw) or too long. Returns the
 * note and the <pre> (text is added to it as more arrives).
 */
/**
 * @param {HTMLElement} container
 * @param {string} text
 * @param {MarkdownLabels} labels
 * @param {boolean} failed
 */
function showPlain(container, text, labels, failed) {
  const note = document.createElement("p");
  note.className = "md-plain-note";
  note.setAttribute("role", "note");
  note.textContent = failed ? labels.couldNotFormat : labels.tooLongToFormat(text.length, MAX_MARKDOWN_CHARS);
  const pre = document.createElement("pre");
  pre.className = "md-plain";
  pre.textContent = text;
  container.replaceChildren(note, pre);
  return { note, pre };
}

/**
 * @param {HTMLElement} container
 * @param {unknown} text
 * @param {MarkdownOptions} [options]
 */
export function renderMarkdown(container, text, { images = new ImagePolicy(), labels = {} } = {}) {
  container.classList.add("markdown");
  container.replaceChildren();
  const source = String(text ?? "").replace(/\r\n?/g, "\n");
  const all = withDefaults(labels);
  if (source.length > MAX_MARKDOWN_CHARS) {
    showPlain(container, source, all, false);
    return;
  }
  try {
    const fragment = toFragment(tokensToHtml(lex(source, {})), images, all);
    renderDiagrams(fragment);
    container.append(fragment);
  } catch (error) {
    console.error("markdown: shown as plain text, rendering failed:", error);
    showPlain(container, source, all, true);
  }
}

export class StreamRenderer {
  /** @type {HTMLElement} */
  #container;
  /** @type {ImagePolicy} */
  #images;
  /** @type {MarkdownLabels} */
  #labels;
  #source = ""; // all text so far, line endings normalised as marked does
  #endsWithCR = false;
  #committed = 0; // length of #source that lives in finished blocks
  /** @type {FrozenBlock[]} */
  #blocks = []; // finished blocks: {raw, nodes}
  /** @type {ChildNode[]} */
  #openNodes = [];
  /** @type {import("marked").Links} */
  #links = Object.create(null); // reference definitions from finished blocks
  /** @type {{timer: ReturnType<typeof setTimeout>} | {raf: number} | null} */
  #frame = null;
  /** @type {MessageChannel | null} */
  #catchUp = null;
  #lexedEnd = 0; // end of the text the last update lexed
  #finished = false;
  #destroyed = false;
  #nextFrameUpdate = 0; // performance.now() before which no frame update runs
  /** @type {{pre: HTMLPreElement, note: HTMLParagraphElement, failed: boolean, shown: number} | null} */
  #plain = null; // once the text is shown as written: {pre, shown: how much of #source it holds}

  /**
   * @param {HTMLElement} container
   * @param {MarkdownOptions} [options]
   */
  constructor(container, { images = new ImagePolicy(), labels = {} } = {}) {
    this.#container = container;
    container.classList.add("markdown");
    this.#images = images;
    this.#labels = withDefaults(labels);
  }

  /** @param {unknown} delta */
  append(delta) {
    if (this.#finished) throw new Error("StreamRenderer.append() was called after finish()");
    if (this.#destroyed || !delta) return;
    this.#take(delta);
    this.#scheduleFrame();
    // Falling behind (text arrives faster than frames): freeze a slice of finished blocks now, inside
    // this call. A task scheduled for it would queue behind every message already waiting.
    if (this.#source.length - Math.max(this.#lexedEnd, this.#committed) > UPDATE_BUDGET) {
      if (this.#render({ budget: UPDATE_BUDGET, tail: false })) this.#scheduleCatchUp();
    }
  }

  /** @param {string} full */
  setText(full) {
    this.#cancel();
    this.#container.replaceChildren();
    this.#source = "";
    this.#endsWithCR = false;
    this.#committed = 0;
    this.#lexedEnd = 0;
    this.#blocks = [];
    this.#openNodes = [];
    this.#links = Object.create(null);
    this.#finished = false;
    this.#plain = null;
    if (full) this.#take(full);
    this.#render({});
  }

  finish() {
    if (this.#destroyed || this.#finished) return;
    this.#cancel();
    this.#render({ final: true });
    this.#finished = true;
  }

  /** Render everything that has arrived now instead of at the next animation frame. */
  flush() {
    if (this.#destroyed || this.#finished) return;
    this.#cancel();
    this.#render({});
  }

  destroy() {
    this.#cancel();
    this.#destroyed = true;
  }

  /** The text received so far (normalised line endings). */
  get text() {
    return this.#source;
  }

  /** @param {unknown} delta */
  #take(delta) {
    let text = String(delta);
    if (this.#endsWithCR && text.startsWith("\n")) text = text.slice(1); // "\r" | "\n" split across deltas
    this.#endsWithCR = text.endsWith("\r");
    this.#source += text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text;
  }

  // Two kinds of update. Frame updates (once per animation frame) render the open tail, so what is
  // painted is current. Catch-up updates, run by append() itself when more than UPDATE_BUDGET
  // characters are waiting (tokens arriving faster than frames), and by a task of their own when no
  // more appends come, only freeze finished blocks, a slice at a time: no update does unbounded
  // work, and rendering keeps pace with the stream instead of piling up for finish().
  // A catch-up that freezes blocks takes the stale tail off the page; the frame update that always
  // runs before the next paint puts the current one back. The blocks a catch-up freezes get their
  // code highlighted when it comes into view (lazy_highlight.js), not while the text outruns frames.
  #scheduleFrame() {
    if (this.#frame !== null) return;
    const run = () => {
      this.#frame = null;
      const start = performance.now();
      if (start < this.#nextFrameUpdate) { // too soon after the last one: wait for a later frame
        this.#scheduleFrame();
        return;
      }
      if (this.#render({ budget: UPDATE_BUDGET })) this.#scheduleCatchUp();
      const now = performance.now();
      this.#nextFrameUpdate = start + Math.max(FRAME_UPDATE_INTERVAL_MS, (now - start) * FRAME_UPDATE_COST_RATIO);
    };
    // Hidden tabs get no animation frames; a slow timer still keeps the DOM close to the text.
    this.#frame = document.visibilityState === "hidden"
      ? { timer: setTimeout(run, 100) }
      : { raf: requestAnimationFrame(run) };
  }

  #scheduleCatchUp() {
    if (this.#catchUp !== null || this.#destroyed) return;
    const channel = new MessageChannel();
    this.#catchUp = channel;
    channel.port1.onmessage = () => {
      this.#catchUp = null;
      if (this.#destroyed || this.#finished) return;
      if (this.#render({ budget: UPDATE_BUDGET, tail: false })) this.#scheduleCatchUp();
    };
    channel.port2.postMessage(null);
  }

  #cancel() {
    if (this.#catchUp !== null) {
      this.#catchUp.port1.close();
      this.#catchUp = null;
    }
    if (this.#frame === null) return;
    if ("raf" in this.#frame) cancelAnimationFrame(this.#frame.raf);
    else clearTimeout(this.#frame.timer);
    this.#frame = null;
  }

  /**
   * Bring the page up to date with the text (#renderMarkdown), or show the text as written when it is
   * too long to format or formatting it throws. Never throws. Returns whether text is still waiting.
   */
  /**
   * @param {{final?: boolean, budget?: number, tail?: boolean}} options
   * @returns {boolean}
   */
  #render(options) {
    if (this.#destroyed) return false;
    if (!this.#plain && this.#source.length > MAX_MARKDOWN_CHARS) this.#toPlain(false);
    if (!this.#plain) {
      try {
        return this.#renderMarkdown(options);
      } catch (error) {
        console.error("markdown: shown as plain text, rendering failed:", error);
        this.#toPlain(true);
      }
    }
    const plain = this.#plain;
    if (!plain) return false; // #toPlain above always set it
    if (plain.shown < this.#source.length) {
      plain.pre.append(this.#source.slice(plain.shown));
      plain.shown = this.#source.length;
      if (!plain.failed) plain.note.textContent = this.#labels.tooLongToFormat(plain.shown, MAX_MARKDOWN_CHARS);
    }
    return false;
  }

  /** @param {boolean} failed */
  #toPlain(failed) {
    this.#blocks = [];
    this.#openNodes = [];
    const { note, pre } = showPlain(this.#container, this.#source, this.#labels, failed);
    this.#plain = { pre, note, failed, shown: this.#source.length };
  }

  /**
   * Lex the text after the finished blocks (at most `budget` characters more than last time), freeze
   * the blocks that can no longer change and, when `tail`, render the open rest. Returns whether
   * text is still waiting.
   */
  /** @param {{final?: boolean, budget?: number, tail?: boolean}} options */
  #renderMarkdown({ final = false, budget = Infinity, tail = true }) {
    const end = final ? this.#source.length : nextWindowEnd(this.#source, this.#committed, this.#lexedEnd, budget);
    this.#lexedEnd = end;
    const tokens = lex(this.#source.slice(this.#committed, end), this.#links);
    const open = final ? tokens.length : finishedPrefix(tokens, this.#links);
    if (open > 0 || tail) {
      for (const node of this.#openNodes) node.remove();
      this.#openNodes = [];
    }
    if (open > 0) {
      // Updates that are behind the text (catch-ups, and frames that cannot take in all that arrived)
      // leave highlighting to lazy_highlight.js: the blocks they freeze are highlighted when they come
      // into view, not all while the text outruns the frames.
      const behind = !tail || end < this.#source.length;
      const frozen = tokens.slice(0, open);
      const block = this.#freeze(frozen.map((token) => token.raw).join(""),
        tokensToHtml(frozen, { deferHighlighting: behind }), collectDefinitions(frozen, Object.create(null)));
      if (behind) for (const node of block.nodes) if (node instanceof Element) highlightWhenSeen(node);
    }
    if (tail) {
      const fragment = toFragment(tokensToHtml(tokens.slice(open)), this.#images, this.#labels);
      this.#openNodes = [...fragment.childNodes];
      this.#container.append(fragment);
    } else if (open > 0) {
      this.#scheduleFrame();
    }
    return end < this.#source.length;
  }

  /**
   * Put a finished block on the page for good; its definitions may change earlier blocks.
   * @param {string} raw
   * @param {string} html
   * @param {import("marked").Links} defs
   * @returns {FrozenBlock}
   */
  #freeze(raw, html, defs) {
    const fragment = toFragment(html, this.#images, this.#labels);
    renderDiagrams(fragment); // a finished block: its diagram is drawn once, here
    const block = { raw, nodes: nodesOf(fragment) };
    this.#container.append(fragment);
    this.#committed += raw.length;
    /** @type {string[]} */
    const added = [];
    for (const [tag, def] of Object.entries(defs)) {
      if (tag in this.#links) continue;
      this.#links[tag] = def;
      added.push(tag);
    }
    if (added.length) this.#refreshReferences(added);
    this.#blocks.push(block);
    return block;
  }

  /**
   * Earlier finished blocks that mention a newly defined label are rendered again with it.
   * @param {string[]} labels
   */
  #refreshReferences(labels) {
    for (const block of this.#blocks) {
      const text = normalLabel(block.raw);
      if (!labels.some((label) => text.includes(`[${label}`))) continue;
      const fragment = toFragment(tokensToHtml(lex(block.raw, this.#links)), this.#images, this.#labels);
      const nodes = nodesOf(fragment);
      block.nodes[0].before(fragment);
      for (const node of block.nodes) node.remove();
      block.nodes = nodes;
    }
  }
}
