/**
 * Mermaid diagrams from ```mermaid blocks, drawn once their fence has closed.
 *
 *   diagramsSettled()      resolves when every diagram asked for so far is drawn or refused
 *   mermaidMarkup(source)  -> Promise<string>   one diagram as markup (<style> + sanitized <svg>), for an artifact
 *   renderDiagrams(root)   each finished `<pre><code class="language-mermaid">` under root: its frame
 *                          (code_blocks.js) shows the diagram instead once mermaid has drawn it; until
 *                          then, and if it cannot be drawn, the source stays, with mermaid's message under it
 *
 * Mermaid (self-hosted) is fetched the first time a diagram appears (its own chunk) and runs with
 * securityLevel "strict" (no click callbacks, no links to scripts, labels as text) and htmlLabels off
 * (no foreignObject HTML). Its SVG is then sanitized by DOMPurify's SVG profile with a strict
 * allow-list: no scripts, no foreignObject, no links, no external references, no event handlers. The
 * diagram lives in a shadow root, so its ids and the CSS mermaid writes for it (given to the shadow
 * root as a constructed stylesheet, its @import and url() taken out) reach nothing else on the page.
 *
 * Size: the drawing's own (its viewBox), shrunk to the column when it is wider; mermaid's
 * `width="100%"` would blow a two-node graph up to the whole column.
 * Theme: mermaid's "neutral" on a light page and "dark" on a dark one (html[data-theme], set by
 * Settings > Theme, else the browser's preference); when the theme changes, the diagrams on the page
 * are drawn again in the new one. Besides that, a diagram is drawn once: only finished blocks get here.
 * CSP: mermaid draws into the page (it measures text) and writes style attributes and a <style>
 * element as it goes, which the page's CSP (style-src 'self') refuses, each refusal a console error.
 * While it draws, in its own off-screen box, those writes are turned into CSSOM (allowed) and its
 * <style> is kept aside for the shadow root's stylesheet, so drawing breaks no CSP rule.
 */

import DOMPurify from "dompurify";

const MAX_SOURCE = 20_000; // characters of diagram source: a bigger one is left as code
/** @typedef {import("mermaid").Mermaid} Mermaid */

/** @type {Promise<Mermaid> | null} */
let loading = null;
let counter = 0;
/** @type {Set<Promise<void>>} */
const pending = new Set(); // draws under way (diagramsSettled)

const purifier = DOMPurify(window);
purifier.setConfig({
  USE_PROFILES: { svg: true, svgFilters: true },
  FORBID_TAGS: ["foreignObject", "style", "script", "a", "image", "use", "animate", "set", "animateMotion",
                "animateTransform", "feImage"],
  FORBID_ATTR: ["href", "xlink:href", "style"],
  RETURN_DOM_FRAGMENT: true,
});
purifier.addHook("afterSanitizeAttributes", (node) => {
  for (const attr of [...(node.attributes ?? [])]) {
    // url() only to this diagram's own markers and gradients, never to a file.
    if (/url\(/i.test(attr.value) && !/^url\(#[\w:.-]+\)$/.test(attr.value.trim())) node.removeAttribute(attr.name);
  }
});

// CSS properties that are SVG presentation attributes too, kept from mermaid's style attributes as such.
const PRESENTATION = new Set(["fill", "fill-opacity", "stroke", "stroke-width", "stroke-dasharray", "stroke-opacity",
  "opacity", "text-anchor", "dominant-baseline", "alignment-baseline", "font-size", "font-weight", "font-style"]);
/** @type {WeakMap<Element, {source: string, dark: boolean}>} */
const drawn = new WeakMap(); // .md-diagram host -> {source, dark}: to draw it again in another theme
let queue = Promise.resolve(); // mermaid's settings are global: one drawing at a time

/** @param {ParentNode} root */
export function renderDiagrams(root) {
  for (const code of root.querySelectorAll?.("pre > code.language-mermaid") ?? []) {
    const block = code.closest(".md-code") ?? code.parentElement;
    const source = code.textContent ?? "";
    if (!block || source.length > MAX_SOURCE) continue; // the selector's <pre> is always there
    const host = document.createElement("div");
    const drawing = paint(host, source).then(() => {
      block.classList.add("md-diagram-frame"); // the same node stays: the renderer keeps a hold on it
      // The toolbar stays where it can open the diagram as an artifact (code_blocks.js); else the drawing alone.
      const bar = block.querySelector(".md-code-open")?.parentElement;
      block.replaceChildren(...(bar ? [bar] : []), host);
    }).catch((error) => {
      const note = document.createElement("p");
      note.className = "md-diagram-error";
      note.setAttribute("role", "note");
      note.textContent = `Diagram not drawn: ${String(/** @type {{message?: unknown}} */ (Object(error)).message ?? error).split("\n")[0].slice(0, 300)}`;
      block.append(note); // inside its frame: the blocks around it stay as they are
    });
    track(drawing);
  }
}

/** Resolves once every diagram asked for so far is drawn or refused (tests, benchmarks). */
export async function diagramsSettled() {
  while (pending.size) await Promise.allSettled([...pending]);
}

/** @param {Promise<void>} drawing */
function track(drawing) {
  /** @type {Promise<void>} */
  const settled = drawing.finally(() => pending.delete(settled));
  pending.add(settled);
}

const darkTheme = () => {
  const chosen = document.documentElement.dataset.theme;
  return chosen === "dark" || (chosen !== "light" && matchMedia("(prefers-color-scheme: dark)").matches);
};

/** Every diagram on the page drawn in another theme than the page's now, drawn again. */
function redrawAll() {
  for (const host of document.querySelectorAll(".md-diagram")) {
    const last = drawn.get(host);
    if (last && last.dark !== darkTheme()) track(paint(host, last.source).catch(() => {})); // else it stays
  }
}

function mermaidModule() {
  loading ??= import("mermaid").then(({ default: mermaid }) => {
    new MutationObserver(redrawAll).observe(document.documentElement, { attributeFilter: ["data-theme"] });
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", redrawAll);
    return mermaid;
  });
  return loading;
}

/**
 * @param {"dark" | "neutral"} theme
 * @returns {import("mermaid").MermaidConfig}
 */
function settings(theme) {
  return {
    startOnLoad: false, securityLevel: "strict", htmlLabels: false, flowchart: { htmlLabels: false },
    maxTextSize: MAX_SOURCE, maxEdges: 500, theme, fontFamily: "system-ui, sans-serif",
    secure: ["secure", "securityLevel", "startOnLoad", "maxTextSize", "maxEdges", "htmlLabels", "theme",
             "themeCSS", "themeVariables", "fontFamily", "flowchart"],
  };
}

/**
 * Draw `source` into `host`'s shadow root, in the page's theme, at the drawing's own size.
 * @param {Element} host
 * @param {string} source
 * @returns {Promise<void>}
 */
function paint(host, source) {
  const drawing = queue.then(async () => {
    const dark = darkTheme();
    const { image, css } = await draw(source, dark);
    host.className = "md-diagram";
    host.setAttribute("role", "img");
    host.setAttribute("aria-label", `Diagram: ${source.split("\n")[0].slice(0, 80)}`);
    const shadow = host.shadowRoot ?? host.attachShadow({ mode: "open" });
    shadow.adoptedStyleSheets = [sheetOf(`:host{display:block;overflow-x:auto} svg{display:block;max-width:100%;height:auto}\n${css}`)];
    shadow.replaceChildren(image);
    drawn.set(host, { source, dark });
    if (dark !== darkTheme()) track(paint(host, source).catch(() => {})); // the theme changed meanwhile
  });
  queue = drawing.catch(() => {});
  return drawing;
}

/**
 * The sanitized drawing of `source`, at its own size, and mermaid's CSS for it.
 * @param {string} source
 * @param {boolean} dark
 * @returns {Promise<{image: SVGSVGElement, css: string}>}
 */
async function draw(source, dark) {
  const mermaid = await mermaidModule();
  mermaid.initialize(settings(dark ? "dark" : "neutral"));
  const { svg, css } = await drawOffscreen(mermaid, `md-diagram-${++counter}`, source);
  // setConfig above made RETURN_DOM_FRAGMENT the default, which DOMPurify's typings cannot see from here.
  const fragment = /** @type {DocumentFragment} */ (/** @type {unknown} */ (purifier.sanitize(svg)));
  const image = fragment.querySelector("svg");
  if (!image) throw new Error("mermaid returned no drawing");
  const box = image.viewBox?.baseVal;
  if (box && box.width > 0 && box.height > 0) {
    image.setAttribute("width", String(Math.ceil(box.width)));
    image.setAttribute("height", String(Math.ceil(box.height)));
  }
  return { image, css };
}

/**
 * A diagram as a document's markup (an artifact's: web/artifacts/), drawn and sanitized as the chat's are, in the
 * page's theme: its SVG after mermaid's CSS (nothing in it loads a file).
 * @param {string} source
 * @returns {Promise<string>}
 */
export function mermaidMarkup(source) {
  if (source.length > MAX_SOURCE) return Promise.reject(new Error(`a diagram of more than ${MAX_SOURCE} characters`));
  const drawing = queue.then(async () => {
    const { image, css } = await draw(source, darkTheme());
    const style = document.createElement("style");
    style.textContent = cleanCSS(css);
    return style.outerHTML + image.outerHTML;
  });
  queue = drawing.then(() => {}, () => {});
  return drawing;
}

/** @param {string} css   mermaid's, with nothing that loads a file */
const cleanCSS = (css) => css.replace(/@import[^;]*;?/gi, "").replace(/url\((?!\s*#)[^)]*\)/gi, "none");

/**
 * A constructed stylesheet (CSSOM: the CSP allows it) of mermaid's CSS, with nothing that loads a file.
 * @param {string} css
 */
function sheetOf(css) {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(cleanCSS(css));
  return sheet;
}

/**
 * mermaid.render in an off-screen box of its own, without one CSP refusal: returns the SVG (with no
 * style attributes) and mermaid's CSS for it. Refused would be the style attributes mermaid sets (they
 * go through CSSOM instead), its <style> element (kept aside; its CSS applies meanwhile as a constructed
 * sheet, so text is measured as it will be shown) and the style attributes of the SVG text it parses
 * again (a browser checks those even in an inert document: the text it serializes has none).
 */
/**
 * @param {Mermaid} mermaid
 * @param {string} id
 * @param {string} source
 * @returns {Promise<{svg: string, css: string}>}
 */
async function drawOffscreen(mermaid, id, source) {
  const innerHTML = Object.getOwnPropertyDescriptor(Element.prototype, "innerHTML");
  const readInner = innerHTML?.get;
  if (!innerHTML || !readInner) throw new Error("this browser's Element has no innerHTML to read");
  const box = document.createElement("div");
  Object.assign(box.style, { position: "fixed", left: "-100000px", top: "0", width: "1000px", visibility: "hidden" });
  document.body.append(box);
  /** @type {string[]} */
  const css = [];
  /** @type {CSSStyleSheet[]} */
  const sheets = []; // ours, added to the page's for the duration
  /** @param {Node} node */
  const inBox = (node) => box.contains(node);
  // mermaid builds some parts detached and puts them in the box later: those count as the box's too.
  /** @param {Node} node */
  const mermaids = (node) => inBox(node) || (!node.isConnected && node.ownerDocument === document);
  /**
   * Whether `node` is a <style> (kept aside: not inserted); <style>s inside it are taken out.
   * @param {Node} node
   */
  const keptAside = (node) => {
    if (!(node instanceof Element)) return false;
    for (const style of node.localName === "style" ? [node] : node.querySelectorAll("style")) {
      const text = style.textContent ?? "";
      css.push(text);
      style.remove();
      const sheet = sheetOf(text);
      sheets.push(sheet);
      document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    }
    return node.localName === "style";
  };
  const { setAttribute } = Element.prototype;
  const { appendChild, insertBefore } = Node.prototype;
  Element.prototype.setAttribute = function (name, value) {
    if (String(name).toLowerCase() === "style" && mermaids(this) && hasStyle(this)) this.style.cssText = String(value);
    else setAttribute.call(this, name, value);
  };
  Node.prototype.appendChild = /** @type {Node["appendChild"]} */ (
    /** @this {Node} @param {Node} node */ function (node) {
      return inBox(this) && keptAside(node) ? node : appendChild.call(this, node);
    });
  Node.prototype.insertBefore = /** @type {Node["insertBefore"]} */ (
    /** @this {Node} @param {Node} node @param {Node | null} before */ function (node, before) {
      return inBox(this) && keptAside(node) ? node : insertBefore.call(this, node, before);
    });
  Object.defineProperty(Element.prototype, "innerHTML", {
    ...innerHTML,
    /**
     * @this {Element}
     * @returns {string}
     */
    get() {
      if (!inBox(this)) return readInner.call(this);
      const copy = /** @type {Element} */ (this.cloneNode(true));
      for (const node of copy.querySelectorAll("[style]")) {
        // What SVG can say as an attribute stays (text-anchor centres a label); the purifier checks it.
        if (node instanceof SVGElement) {
          for (const name of node.style) {
            if (PRESENTATION.has(name) && !node.hasAttribute(name)) node.setAttribute(name, node.style.getPropertyValue(name));
          }
        }
        node.removeAttribute("style");
      }
      return readInner.call(copy);
    },
  });
  try {
    const { svg } = await mermaid.render(id, source, box);
    return { svg, css: css.join("\n") };
  } finally {
    Object.assign(Element.prototype, { setAttribute });
    Object.assign(Node.prototype, { appendChild, insertBefore });
    Object.defineProperty(Element.prototype, "innerHTML", innerHTML);
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((sheet) => !sheets.includes(sheet));
    box.remove();
  }
}

/**
 * Whether `element` has a style declaration to write to (every HTML, SVG and MathML element has).
 * @param {Element} element
 * @returns {element is Element & ElementCSSInlineStyle}
 */
function hasStyle(element) {
  return "style" in element;
}
