/**
 * Tiny DOM helpers. Text always goes in as text (textContent), never as HTML: the only HTML the
 * app inserts comes from the renderer (web/render/), which sanitizes it with DOMPurify.
 *
 *   h("button", {type: "button", "aria-label": "Stop", onclick: fn}, "Stop")
 */

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(el.dataset, value);
    else if (name === "className") el.className = value;
    else if (value === true) el.setAttribute(name, "");
    else el.setAttribute(name, String(value));
  }
  el.append(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
  return el;
}

export function clear(el) {
  el.replaceChildren();
  return el;
}

/** Save a Blob as a file through a temporary link (no navigation, nothing remote). */
export function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = h("a", { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

