// Test page for web/render/: exposes window.harness for tests/e2e/test_render.py, which drives it
// with page.evaluate (CDP; the page's CSP forbids string evaluation inside the page itself).
import { openBlockIndex } from "../../../web/render/blocks.js";
import { diagramsSettled } from "../../../web/render/diagrams.js";
import { highlightNow } from "../../../web/render/lazy_highlight.js";
import { ImagePolicy, renderMarkdown, StreamRenderer } from "../../../web/render/markdown.js";
import { lex } from "../../../web/render/parse.js";
import { renderToolContent } from "../../../web/render/tool_result.js";

const policy = new ImagePolicy([], (hosts) => { window.savedHosts = hosts; });
const out = document.getElementById("out");

function fresh(id) {
  const element = document.createElement("div");
  element.className = "rendered";
  element.id = id;
  document.getElementById(id)?.remove();
  out.append(element);
  return element;
}

const solidNodes = (element) => [...element.childNodes].filter((node) => !(node.nodeType === 3 && node.data === ""));

/** How many top-level nodes the finished blocks of `text` render to (independently of StreamRenderer). */
function finishedNodeCount(text, scratch) {
  const tokens = lex(text, {}); // the renderer's own lexer options (math.js's blocks are blocks)
  const open = openBlockIndex(tokens);
  if (open <= 0) return 0;
  const finishedText = tokens.slice(0, open).map((token) => token.raw).join("");
  renderMarkdown(scratch, finishedText, { images: policy });
  return scratch.childNodes.length;
}

window.harness = {
  policy,

  // The HTML the tests compare is read once every diagram (drawn later, diagrams.js) is drawn or refused.
  async oneShot(text, id = "oneshot") {
    const element = fresh(id);
    renderMarkdown(element, text, { images: policy });
    await diagramsSettled();
    return element.innerHTML;
  },

  /**
   * Stream `chunks` into a StreamRenderer, rendering after each chunk. Returns the final HTML and
   * every violation seen: a DOM differing from a one-shot render of the same prefix, a finished
   * block's node removed later, or any mutation inside an existing node.
   */
  stream(chunks, { compareEachStep = true, checkSurvival = true, id = "stream" } = {}) {
    const element = fresh(id);
    const scratch = document.createElement("div");
    const renderer = new StreamRenderer(element, { images: policy });
    const observer = new MutationObserver(() => {});
    observer.observe(element, { childList: true, subtree: true, characterData: true, attributes: true });
    const mustSurvive = new Map(); // node -> step at which its block was finished
    const problems = [];
    let sofar = "";
    chunks.forEach((chunk, step) => {
      renderer.append(chunk);
      sofar += chunk;
      renderer.flush();
      for (const record of observer.takeRecords()) {
        if (record.target !== element) problems.push(`step ${step}: ${record.type} inside an existing node`);
      }
      if (compareEachStep) {
        renderMarkdown(scratch, sofar, { images: policy });
        if (scratch.innerHTML !== element.innerHTML) {
          problems.push(`step ${step}: differs from one-shot\n--- stream\n${element.innerHTML}\n--- one-shot\n${scratch.innerHTML}`);
        }
      }
      const finished = finishedNodeCount(sofar, scratch);
      for (const node of solidNodes(element).slice(0, finished)) if (!mustSurvive.has(node)) mustSurvive.set(node, step);
    });
    renderer.finish();
    observer.takeRecords();
    for (const [node, step] of checkSurvival ? mustSurvive : []) {
      if (node.parentNode !== element) problems.push(`a node finished at step ${step} was replaced later`);
    }
    renderer.destroy();
    return diagramsSettled().then(() => ({ html: element.innerHTML, problems, finishedNodes: mustSurvive.size }));
  },

  /**
   * Stream through the renderer's own scheduling (animation frames and catch-up tasks; no flush),
   * yielding to the event loop every `yieldEvery` chunks. Resolves after finish() with the HTML and
   * how many top-level nodes were already on the page just before finish(). Code blocks whose
   * highlighting was deferred (lazy_highlight.js) are highlighted before the HTML is read, unless
   * `highlightAll` is false; `deferred` says how many there were.
   */
  async streamFrames(chunks, { id = "frames", yieldEvery = 1, highlightAll = true } = {}) {
    const element = fresh(id);
    const renderer = new StreamRenderer(element, { images: policy });
    for (const [i, chunk] of chunks.entries()) {
      renderer.append(chunk);
      if (i % yieldEvery === 0) await new Promise((resolve) => setTimeout(resolve, 0));
    }
    await new Promise((resolve) => setTimeout(resolve, 0));
    const nodesBeforeFinish = element.childNodes.length;
    renderer.finish();
    const deferred = [...element.querySelectorAll("pre > code[class*='language-']:not(.hljs)")];
    if (highlightAll) for (const code of deferred) highlightNow(code);
    else deferred.forEach((code, i) => { code.dataset.testDeferred = String(i); }); // for locators
    const highlighted = deferred.filter((code) => code.classList.contains("hljs")).length;
    await diagramsSettled();
    return { html: element.innerHTML, nodesBeforeFinish, nodes: element.childNodes.length,
             deferred: highlightAll ? highlighted : deferred.length };
  },

  /** Stream chunk by chunk, leaving the renderer open (as mid-stream) after `chunks`. */
  streamOpen(chunks, id = "open") {
    const element = fresh(id);
    const renderer = new StreamRenderer(element, { images: policy });
    for (const chunk of chunks) {
      renderer.append(chunk);
      renderer.flush();
    }
    window.openRenderer = renderer;
    return element.innerHTML;
  },

  /**
   * A transcript of messages, each in its own StreamRenderer as the app's message views have them:
   * streamed (append, then finish) when `live`, else set whole (setText, as a stored message is).
   * `brokenImages`: the messages share an image policy that throws, a failing part of the renderer.
   * Returns, per message, whether it is shown as plain text, its note and the text it shows.
   */
  messages(texts, { id = "messages", live = false, brokenImages = false } = {}) {
    const list = fresh(id);
    const images = brokenImages
      ? { isAllowed() { throw new Error("the image policy broke"); }, subscribe() { return () => {}; } }
      : policy;
    return texts.map((text, i) => {
      const element = document.createElement("div");
      element.id = `${id}-${i}`;
      list.append(element);
      const renderer = new StreamRenderer(element, { images });
      if (live) {
        renderer.append(text);
        renderer.flush();
        renderer.finish();
      } else {
        renderer.setText(text);
        renderer.finish();
      }
      const plain = element.querySelector(":scope > pre.md-plain");
      return { plain: Boolean(plain), note: element.querySelector(":scope > .md-plain-note")?.textContent ?? null,
               shown: plain ? plain.textContent : element.textContent, strong: element.querySelectorAll("strong").length };
    });
  },

  /** Everything unsafe left in the DOM under #id (an empty list when the renderer did its job). */
  audit(id) {
    const root = document.getElementById(id);
    const problems = [];
    // MathML is allowed as KaTeX writes it (math.js), never its actions, foreign content or links.
    const banned = "script, style, iframe, frame, object, embed, svg, maction, annotation-xml, mglyph, form, button:not(.md-code-copy):not(.md-image-load):not(.md-image-always), "
      + "textarea, select, link, meta, base, video, source, template, input:not([type=checkbox][disabled])";
    for (const node of root.querySelectorAll(banned)) problems.push(`<${node.localName}> element`);
    // The only MathML is KaTeX's, in math.js's wrapper: a model's own <math> is text (T-X15).
    const strayMath = root.querySelectorAll("math:not(.math > .katex > math)").length;
    if (strayMath) problems.push(`${strayMath} <math> outside KaTeX's output`);
    for (const node of root.querySelectorAll("*")) {
      for (const attr of node.attributes) {
        if ((attr.name === "href" && node.localName !== "a") || /^on/i.test(attr.name) || ["style", "id", "name", "srcset", "srcdoc", "action", "formaction", "background"].includes(attr.name)) {
          problems.push(`${attr.name}= on <${node.localName}>`);
        }
      }
    }
    for (const node of root.querySelectorAll("[src]:not(img)")) {
      if (!/^blob:/.test(node.getAttribute("src"))) problems.push(`src= on <${node.localName}>`); // a tool's audio: our blob
    }
    for (const img of root.querySelectorAll("img")) {
      if (img.hasAttribute("src") && !/^(data|blob):/.test(img.getAttribute("src"))) problems.push(`img src ${img.getAttribute("src")}`);
    }
    for (const link of root.querySelectorAll("a")) {
      const href = link.getAttribute("href") ?? "";
      // A tool's file offered as a download: the page's own blob, saved (download=), never opened.
      if (link.classList.contains("tool-download") && /^blob:/.test(href) && link.hasAttribute("download")) continue;
      if (!/^(https?|mailto):/.test(href)) problems.push(`link to ${href}`);
      if (link.target !== "_blank" || link.rel !== "noopener noreferrer") problems.push(`link ${href} target=${link.target} rel=${link.rel}`);
    }
    return problems;
  },

  tool(items, id = "tool", options = {}) {
    const element = fresh(id);
    renderToolContent(element, items, { images: policy, ...options });
    return element.innerHTML;
  },
};
document.documentElement.dataset.harness = "ready";
