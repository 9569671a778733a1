/**
 * Tiny DOM helpers. Text always goes in as text (textContent), never as HTML: the only HTML the
 * app inserts comes from the renderer (web/render/), which sanitizes it with DOMPurify.
 *
 *   h("button", {type: "button", "aria-label": "Stop", onclick: fn}, "Stop")
 *   byId("message", HTMLTextAreaElement)     the page's element, of the class the code relies on
 *   find(root, ".row-title", HTMLElement)    the same for a selector inside an element
 *
 * byId and find throw when the element is missing or of another kind: the page's HTML and the code disagree,
 * which is a bug to see at once, not a null to stumble on later.
 */

/**
 * @typedef {Node | string | number | null | undefined | false} Child
 * @typedef {Record<string, unknown> | null | undefined} Attrs
 */

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      el.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    } else if (name === "dataset") Object.assign(el.dataset, value);
    else if (name === "className") el.className = String(value);
    else if (value === true) el.setAttribute(name, "");
    else el.setAttribute(name, String(value));
  }
  const kept = children.flat().filter((c) => c !== undefined && c !== null && c !== false);
  el.append(.../** @type {(Node | string)[]} */ (kept));
  return el;
}

/**
 * @template {Element} T
 * @param {T} el
 * @returns {T}
 */
export function clear(el) {
  el.replaceChildren();
  return el;
}

/**
 * The page's element with this id, checked to be of `type` (HTMLElement when not given).
 * @template {Element} [T=HTMLElement]
 * @param {string} id
 * @param {{new (): T, prototype: T}} [type]
 * @returns {T}
 */
export function byId(id, type) {
  return checked(document.getElementById(id), type, `#${id}`);
}

/**
 * The first element under `root` matching `selector`, checked to be of `type` (HTMLElement when not given).
 * @template {Element} [T=HTMLElement]
 * @param {ParentNode} root
 * @param {string} selector
 * @param {{new (): T, prototype: T}} [type]
 * @returns {T}
 */
export function find(root, selector, type) {
  return checked(root.querySelector(selector), type, selector);
}

/**
 * @template {Element} T
 * @param {Element | null} el
 * @param {{new (): T, prototype: T} | undefined} type
 * @param {string} what
 * @returns {T}
 */
function checked(el, type, what) {
  const kind = type ?? HTMLElement;
  if (!(el instanceof kind)) throw new Error(`dom: ${what} is ${el ? `a ${el.tagName}` : "missing"}, not a ${kind.name}`);
  return /** @type {T} */ (el);
}

/**
 * Save a Blob as a file through a temporary link (no navigation, nothing remote).
 * @param {Blob} blob
 * @param {string} filename
 */
export function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = h("a", { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
