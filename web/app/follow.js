/**
 * Keeps the end of the transcript in view while the reader is there, and lets go the moment they
 * scroll up; a "Jump to latest" button, shown whenever the end is out of view, brings them back.
 *
 *   const follow = new ScrollFollower(transcript, jumpButton)
 *   follow.toEnd()              show the end and follow again (a message sent, a conversation opened)
 *   follow.reveal(el)           show `el` instead, near the top, and stay there (a conversation opened at a search hit)
 *   const at = follow.anchor()  before the transcript is drawn again: what the reader is looking at
 *   follow.restore(at)          after it: the end again when following, else that same text in place
 *   follow.following            the reader is at the end: what grows there stays in view
 *
 * The transcript grows without scroll events: streamed text, and markdown blocks that render only as
 * they come near the viewport (content-visibility: auto, web/render/render.css: until then a block
 * counts as one line). So a ResizeObserver watches every message and pins the end while following;
 * one scroll to scrollHeight is not enough. For the same reason a redraw holds the reader's block in
 * place as the blocks around it render, until the reader scrolls again.
 */

const AT_END = 8; // px from the end that still count as "at the end"
/** @typedef {{index: number, offset: number}} Anchor   a block's place on screen */

const UP_KEYS = new Set(["ArrowUp", "PageUp", "Home"]);

export class ScrollFollower {
  #lastTop = 0;
  /** @type {number | null} */
  #touchY = null;
  /** @type {{el: Element, offset: number} | null} */
  #held = null; // {el, offset}: the block a redraw must keep where the reader saw it

  /**
   * @param {HTMLElement} scroller
   * @param {HTMLElement} button
   */
  constructor(scroller, button) {
    this.scroller = scroller;
    this.button = button;
    this.following = true;
    this.resizes = new ResizeObserver(() => this.#grew());
    this.resizes.observe(scroller);
    for (const child of scroller.children) this.resizes.observe(child);
    new MutationObserver((records) => this.#childrenChanged(records)).observe(scroller, { childList: true });
    scroller.addEventListener("scroll", () => this.#scrolled(), { passive: true });
    // The reader's own gestures upward let go at once, before the scroll they start is reported.
    scroller.addEventListener("wheel", (ev) => {
      this.#held = null;
      if (ev.deltaY < 0) this.#letGo();
    }, { passive: true });
    scroller.addEventListener("touchstart", (ev) => {
      this.#held = null;
      this.#touchY = ev.touches[0]?.clientY ?? null;
    }, { passive: true });
    scroller.addEventListener("touchmove", (ev) => {
      const y = ev.touches[0]?.clientY;
      if (this.#touchY !== null && y !== undefined && y > this.#touchY) this.#letGo(); // the finger moves down: the view goes up
    }, { passive: true });
    scroller.addEventListener("keydown", (ev) => {
      this.#held = null;
      if (UP_KEYS.has(ev.key)) this.#letGo();
    });
    button.addEventListener("click", () => this.toEnd());
    this.#showButton();
  }

  toEnd() {
    this.following = true;
    this.#held = null;
    this.#pin();
  }

  /** Show `el` near the top (a search hit) and keep it there while the blocks around it render. */
  /**
   * @param {Element} el
   * @param {number} [offset]
   */
  reveal(el, offset = 16) {
    this.following = false;
    this.#held = { el, offset };
    this.#hold();
  }

  /** @returns {Anchor | null} where the reader is, for restore() after a redraw */
  anchor() {
    if (this.following) return null;
    const top = this.scroller.getBoundingClientRect().top;
    const blocks = this.#blocks();
    // The first block still in view; a message that reaches into view counts by its own first block there.
    /** @param {Element} el */
    const inView = (el) => el.getBoundingClientRect().bottom > top;
    let index = blocks.findIndex(inView);
    if (index < 0) return null;
    const inner = blocks.findIndex((el, i) => i > index && inView(el));
    if (inner > 0 && blocks[index].contains(blocks[inner])) index = inner;
    return { index, offset: blocks[index].getBoundingClientRect().top - top };
  }

  /** @param {Anchor | null | undefined} anchor */
  restore(anchor) {
    if (this.following || !anchor) return this.#pin();
    const el = this.#blocks()[anchor.index];
    this.#held = el ? { el, offset: anchor.offset } : null;
    this.#hold();
  }

  /** The messages and each message's top-level blocks, in order: where a redraw puts the reader back. */
  #blocks() {
    return [...this.scroller.querySelectorAll(":scope > li, :scope > li > .content > *, :scope > li > .steps > .step > .content > *")];
  }

  #atEnd() {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight <= AT_END;
  }

  #pin() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.#lastTop = this.scroller.scrollTop;
    this.#showButton();
  }

  #letGo() {
    this.following = false;
    this.#showButton();
  }

  /** Scroll so the held block is where the reader saw it (the blocks above it may have grown). */
  #hold() {
    if (this.#held?.el.isConnected) {
      const { el, offset } = this.#held;
      this.scroller.scrollTop += el.getBoundingClientRect().top - this.scroller.getBoundingClientRect().top - offset;
      this.#lastTop = this.scroller.scrollTop;
    }
    this.#showButton();
  }

  #grew() {
    if (this.following) this.#pin();
    else this.#hold();
  }

  #scrolled() {
    const top = this.scroller.scrollTop;
    if (Math.abs(top - this.#lastTop) > 1) this.#held = null; // not a scroll of ours: the reader moved
    if (this.#atEnd()) this.following = true;
    else if (top < this.#lastTop - 1) this.following = false; // moved up: a scrollbar drag, a key, a swipe
    this.#lastTop = top;
    this.#showButton();
  }

  /** @param {MutationRecord[]} records */
  #childrenChanged(records) {
    for (const record of records) {
      for (const node of record.addedNodes) if (node instanceof Element) this.resizes.observe(node);
      for (const node of record.removedNodes) if (node instanceof Element) this.resizes.unobserve(node);
    }
  }

  #showButton() {
    this.button.hidden = this.#atEnd();
  }
}
