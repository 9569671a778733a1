/**
 * Mermaid diagrams from ```mermaid blocks, drawn once their fence has closed.
 *
 *   diagramsSettled()      resolves when every diagram asked for so far is drawn or refused
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
 * A diagram is drawn once: only finished blocks get here, and the renderer never redraws them.
 */

import DOMPurify from "dompurify";

const MAX_SOURCE = 20_000; // characters of diagram source: a bigger one is left as code
let loading = null;
let counter = 0;
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

export function renderDiagrams(root) {
  for (const code of root.querySelectorAll?.("pre > code.language-mermaid") ?? []) {
    const block = code.closest(".md-code") ?? code.parentElement;
    const source = code.textContent;
    if (source.length > MAX_SOURCE) continue;
    const drawing = draw(source).then((host) => {
      block.classList.add("md-diagram-frame"); // the same node stays: the renderer keeps a hold on it
      block.replaceChildren(host);
    }).catch((error) => {
      const note = document.createElement("p");
      note.className = "md-diagram-error";
      note.setAttribute("role", "note");
      note.textContent = `Diagram not drawn: ${String(error?.message ?? error).split("\n")[0].slice(0, 300)}`;
      block.append(note); // inside its frame: the blocks around it stay as they are
    }).finally(() => pending.delete(drawing));
    pending.add(drawing);
  }
}

/** Resolves once every diagram asked for so far is drawn or refused (tests, benchmarks). */
export async function diagramsSettled() {
  while (pending.size) await Promise.allSettled([...pending]);
}

function mermaidModule() {
  loading ??= import("mermaid").then(({ default: mermaid }) => {
    mermaid.initialize({
      startOnLoad: false, securityLevel: "strict", htmlLabels: false, flowchart: { htmlLabels: false },
      maxTextSize: MAX_SOURCE, maxEdges: 500, theme: "neutral", fontFamily: "system-ui, sans-serif",
      secure: ["secure", "securityLevel", "startOnLoad", "maxTextSize", "maxEdges", "htmlLabels", "theme",
               "themeCSS", "themeVariables", "fontFamily", "flowchart"],
    });
    return mermaid;
  });
  return loading;
}

async function draw(source) {
  const mermaid = await mermaidModule();
  const { svg } = await mermaid.render(`md-diagram-${++counter}`, source);
  const css = /<style[^>]*>([\s\S]*?)<\/style>/i.exec(svg)?.[1] ?? "";
  const fragment = purifier.sanitize(svg);
  const image = fragment.querySelector("svg");
  if (!image) throw new Error("mermaid returned no drawing");
  const host = document.createElement("div");
  host.className = "md-diagram";
  host.setAttribute("role", "img");
  host.setAttribute("aria-label", `Diagram: ${source.split("\n")[0].slice(0, 80)}`);
  const shadow = host.attachShadow({ mode: "open" });
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(`:host{display:block;overflow-x:auto} svg{max-width:100%;height:auto}\n` +
    css.replace(/@import[^;]*;?/gi, "").replace(/url\((?!\s*#)[^)]*\)/gi, "none"));
  shadow.adoptedStyleSheets = [sheet];
  shadow.append(image);
  return host;
}
