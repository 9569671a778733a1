/**
 * Highlighting that waits until a code block is about to be seen.
 *
 *   highlightWhenSeen(root)   every code block under root rendered with highlighting deferred
 *                             (parse.js tokensToHtml(tokens, {deferHighlighting: true})) is
 *                             highlighted when it comes within HIGHLIGHT_MARGIN of the viewport
 *   highlightNow(code)        the same for one <code> element, at once
 *
 * A deferred block is `<pre><code class="language-NAME">` with NAME a language highlight.js knows
 * and no "hljs" class. Highlighting it gives exactly the DOM an eager render gives: highlight.js's
 * HTML for the code's text, sanitized by DOMPurify like every other update, and class
 * "hljs language-NAME". The StreamRenderer defers only blocks it freezes while text arrives faster
 * than frames can show it (a reply streaming at thousands of tokens per second): highlighting all of
 * them at once would cost the main thread more than receiving the stream itself, for blocks that
 * scrolled by unseen. The text, the layout and the Copy button are the same either way.
 */
import { highlightCode, isKnownLanguage } from "./highlight.js";
import { sanitizeToFragment } from "./sanitize.js";

export const HIGHLIGHT_MARGIN = "600px 0px";

/** @type {IntersectionObserver | null} */
let observer = null;

/** @param {Element} code */
function deferredLanguage(code) {
  if (code.classList.contains("hljs")) return null;
  const language = /\blanguage-([\w+#.-]+)/.exec(code.className)?.[1];
  return language && isKnownLanguage(language) ? language : null;
}

/** @param {ParentNode} root */
export function highlightWhenSeen(root) {
  for (const code of root.querySelectorAll("pre > code[class*='language-']")) {
    if (!deferredLanguage(code)) continue;
    observer ??= new IntersectionObserver((entries, watcher) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        watcher.unobserve(entry.target);
        highlightNow(entry.target);
      }
    }, { rootMargin: HIGHLIGHT_MARGIN });
    observer.observe(code);
  }
}

/** @param {Element} code */
export function highlightNow(code) {
  const language = deferredLanguage(code);
  if (!language) return;
  const { html, language: name } = highlightCode((code.textContent ?? "").replace(/\n$/, ""), language);
  code.replaceChildren(sanitizeToFragment(`${html}\n`));
  code.className = `hljs language-${name}`;
}
