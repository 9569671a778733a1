/**
 * A conversation as one self-contained web page to share (#34): what the transcript shows (text, tool cards,
 * math, diagrams, images) as static markup with the site's styles inlined. No script, and nothing loads from
 * anywhere: the page carries its own policy (default-src 'none'; styles inline; images only as data: URLs),
 * images shown from this browser's storage are written into it, others are left out, and the interactive parts
 * (MCP App views, buttons, forms) are left out, saying so where something was.
 *
 *   await sharePage(transcriptElement, title) -> Blob (text/html)
 */

import DOMPurify from "dompurify";
import { t } from "./i18n.js";

const POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";
const LEFT_OUT = "iframe, .app-frame, .mcp-app";
const CONTROLS = "button, input:not([type=checkbox]), textarea, select, nav, dialog, form, script, template, progress";

/** The page's own style rules, read from its stylesheets (fonts left out: they would load from the site). */
function styleText() {
  const rules = [];
  for (const sheet of document.styleSheets) {
    try {
      for (const rule of sheet.cssRules) if (!(rule instanceof CSSFontFaceRule)) rules.push(rule.cssText);
    } catch {
      // a sheet from elsewhere cannot be read; the site has none
    }
  }
  return rules.join("\n");
}

/** @param {string} url a blob: URL of this page @returns {Promise<string | null>} the same bytes as a data: URL */
async function dataUrl(url) {
  try {
    const blob = await (await fetch(url)).blob();
    return await new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result));
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(blob);
    });
  } catch {
    return null;
  }
}

/** @param {Element} copy */
async function staticImages(copy) {
  for (const img of copy.querySelectorAll("img")) {
    const src = img.getAttribute("src") ?? "";
    const inline = src.startsWith("data:image/") ? src : src.startsWith("blob:") ? await dataUrl(src) : null;
    if (inline) img.setAttribute("src", inline);
    else img.remove();
  }
}

/**
 * What lives in shadow roots (the diagrams: render/diagrams.js) into the copy's light DOM, with its styles: a clone
 * leaves shadow roots behind. The copy is an exact clone, so its elements line up with the original's.
 * @param {HTMLElement} original @param {HTMLElement} copy
 */
function unshadow(original, copy) {
  const copies = copy.querySelectorAll("*");
  original.querySelectorAll("*").forEach((el, i) => {
    const shadow = el.shadowRoot;
    if (!shadow) return;
    const css = shadow.adoptedStyleSheets.flatMap((sheet) => [...sheet.cssRules].map((rule) => rule.cssText)).join("\n")
      .replaceAll(":host", `[data-shared-diagram="${i}"]`);
    const style = document.createElement("style");
    style.textContent = css;
    copies[i].setAttribute("data-shared-diagram", String(i));
    copies[i].replaceChildren(style, ...[...shadow.childNodes].map((node) => node.cloneNode(true)));
  });
}

/** @param {HTMLElement} transcript @param {string} title */
export async function sharePage(transcript, title) {
  const copy = /** @type {HTMLElement} */ (transcript.cloneNode(true));
  unshadow(transcript, copy);
  for (const el of copy.querySelectorAll(LEFT_OUT)) {
    const note = document.createElement("p");
    note.className = "hint";
    note.textContent = t("share.viewLeftOut");
    el.replaceWith(note);
  }
  for (const el of copy.querySelectorAll(CONTROLS)) el.remove();
  await staticImages(copy);
  const body = DOMPurify.sanitize(copy.outerHTML, {
    USE_PROFILES: { html: true, svg: true, svgFilters: true, mathMl: true }, ADD_TAGS: ["style"],
    FORBID_TAGS: ["script", "iframe", "object", "embed", "form", "link", "meta", "base"],
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|data:image\/|#)/i,
  });
  const doc = document.implementation.createHTMLDocument(title);
  const meta = (/** @type {Record<string, string>} */ attrs) => {
    const el = doc.createElement("meta");
    for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, value);
    doc.head.prepend(el);
  };
  meta({ name: "referrer", content: "no-referrer" });
  meta({ name: "viewport", content: "width=device-width, initial-scale=1" });
  meta({ "http-equiv": "Content-Security-Policy", content: POLICY });
  meta({ charset: "utf-8" });
  const style = doc.createElement("style");
  style.textContent = styleText();
  doc.head.append(style);
  doc.documentElement.lang = document.documentElement.lang;
  if (document.documentElement.dataset.theme) doc.documentElement.dataset.theme = document.documentElement.dataset.theme;
  const main = doc.createElement("main");
  main.className = "shared";
  const heading = doc.createElement("h1");
  heading.textContent = title;
  main.append(heading);
  main.insertAdjacentHTML("beforeend", body);
  doc.body.append(main);
  return new Blob([`<!doctype html>\n${doc.documentElement.outerHTML}\n`], { type: "text/html" });
}
