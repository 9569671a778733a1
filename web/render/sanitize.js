/**
 * The one gate between untrusted HTML (rendered model output, tool results) and the page.
 *
 *   sanitizeToFragment(html: string) -> DocumentFragment
 *
 * Uses a private DOMPurify instance (its hooks never leak into other modules) with an explicit
 * allow-list: the tags marked, math.js (KaTeX) and highlight.js write, and no others: a model's raw HTML
 * never gets here as markup (parse.js makes it text, T-X15), so this is the second line. Nothing else survives:
 * no script/style/svg/iframe/object/form elements (MathML only as below), no event handlers, no `style`, `id`,
 * `name`, `data-*` or `aria-*` attributes (so untrusted text cannot clobber globals, restyle itself
 * or impersonate our own controls).
 *
 * Hooks:
 *  - `<a>`: only absolute http:, https: and mailto: URLs stay links, rewritten to the parsed URL
 *    and given target="_blank" rel="noopener noreferrer"; any other href is removed and the element
 *    is unwrapped afterwards (its text stays, inert).
 *  - `<img>`: the src is taken off while the markup is still in DOMPurify's inert document (an image
 *    adopted into the page with a src would start loading at once) and parked in IMAGE_SOURCE_ATTR;
 *    images.js decides later whether anything is ever loaded.
 *  - `class`: only `language-*`, highlight.js's own class names and math.js's `math`,
 *    `math-inline`, `math-display`, `math-error*` and KaTeX's `katex*` are kept.
 *  - MathML (KaTeX's output, math.js): its presentation elements and attributes only; `href` is taken
 *    off every element but `<a>` (MathML links would otherwise open javascript: URLs in some browsers).
 *  - `<input>`: always a disabled checkbox (markdown task lists); never a form field.
 *  - `src` stays on `<img>` only (parked, as above): nothing else may name a URL to load.
 */
import DOMPurify from "dompurify";

export const IMAGE_SOURCE_ATTR = "data-orizuru-src";

const ALLOWED_TAGS = [
  // marked's renderer (parse.js), math.js's wrappers and highlight.js's spans
  "a", "blockquote", "br", "code", "del", "div", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "img",
  "input", "li", "ol", "p", "pre", "span", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
  // MathML presentation elements (KaTeX's output); no maction, no semantics-escaping annotation-xml
  "math", "semantics", "annotation", "mrow", "mi", "mo", "mn", "ms", "mtext", "mspace", "msub", "msup", "msubsup",
  "mfrac", "msqrt", "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded",
  "mphantom", "menclose", "mmultiscripts", "mprescripts", "none",
];
const ALLOWED_ATTR = [
  "href", "src", "alt", "title", "class", "align", "start", "type", "checked", "disabled",
  // MathML's presentation attributes (KaTeX's output)
  "xmlns", "display", "encoding", "mathvariant", "mathcolor", "mathbackground", "stretchy", "fence", "separator",
  "lspace", "rspace", "accent", "accentunder", "columnalign", "columnlines", "columnspacing", "rowspacing",
  "rowlines", "rowalign", "scriptlevel", "displaystyle", "width", "height", "depth", "voffset", "minsize", "maxsize",
  "movablelimits", "notation", "linethickness", "symmetric", "largeop", "form", "frame", "side", "align",
];
const LINK_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);
const CLASS_TOKEN = /^(?:language-[\w+#.-]{1,40}|hljs(?:-[a-z-]{1,40})?|[a-z]{1,20}_|math(?:-inline|-display|-error(?:-message)?)?|katex(?:-[a-z]{1,20})?)$/;

const purifier = DOMPurify(window);

purifier.addHook("uponSanitizeAttribute", (_node, data) => {
  if (data.attrName !== "class") return;
  const kept = data.attrValue.split(/\s+/).filter((token) => CLASS_TOKEN.test(token));
  if (kept.length) data.attrValue = kept.join(" ");
  else data.keepAttr = false;
});

purifier.addHook("afterSanitizeAttributes", (node) => {
  if (node.nodeName !== "A" && node.hasAttribute?.("href")) node.removeAttribute("href");
  if (node.nodeName !== "IMG" && node.hasAttribute?.("src")) node.removeAttribute("src");
  switch (node.nodeName) {
    case "A": {
      const href = safeLinkHref(node.getAttribute("href"));
      if (href === null) {
        node.removeAttribute("href");
      } else {
        node.setAttribute("href", href);
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer");
      }
      break;
    }
    case "IMG":
      node.setAttribute(IMAGE_SOURCE_ATTR, node.getAttribute("src") ?? "");
      node.removeAttribute("src");
      break;
    case "INPUT":
      node.setAttribute("type", "checkbox");
      node.setAttribute("disabled", "");
      break;
    default:
  }
});

purifier.setConfig({
  ALLOWED_TAGS,
  ALLOWED_ATTR,
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  ALLOW_UNKNOWN_PROTOCOLS: false,
  RETURN_DOM_FRAGMENT: true,
}); // once: sanitize() then skips re-reading the configuration on every update

/**
 * An absolute http(s)/mailto URL as a normalised string, or null for anything else.
 * @param {string | null | undefined} raw
 */
export function safeLinkHref(raw) {
  if (!raw) return null;
  let url;
  try {
    url = new URL(raw.trim());
  } catch {
    return null; // relative, or not a URL at all
  }
  return LINK_PROTOCOLS.has(url.protocol) ? url.href : null;
}

/**
 * Sanitize `html` into a fragment ready to insert: unsafe parts gone, unlinked anchors unwrapped.
 * @param {string} html
 * @returns {DocumentFragment}
 */
export function sanitizeToFragment(html) {
  // setConfig above made RETURN_DOM_FRAGMENT the default, which DOMPurify's typings cannot see from here.
  const fragment = /** @type {DocumentFragment} */ (/** @type {unknown} */ (purifier.sanitize(html)));
  for (const anchor of fragment.querySelectorAll("a:not([href])")) anchor.replaceWith(...anchor.childNodes);
  return fragment;
}
