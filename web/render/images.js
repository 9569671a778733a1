/**
 * Which images may load, and what stands in for the ones that may not.
 *
 *   new ImagePolicy(allowedHosts = [], onChange?)   hosts the user allowed ("host" or "host:port")
 *     .isAllowed(host) .allow(host) .hosts() .subscribe(fn) -> unsubscribe
 *     onChange(hosts) is called after every allow(): the app persists the list with it.
 *   placeImages(root, policy, labels)   turns every sanitized <img> under root into what may be shown
 *
 * What an <img> from untrusted content becomes:
 *  - http(s) from a host the user allowed: the bytes are fetched by us (no credentials, no referrer,
 *    no redirects to some other host), checked to be a raster image by their magic bytes and shown from
 *    a blob: URL, which the site's CSP (img-src 'self' data: blob:) permits. If the host does not
 *    allow a CORS read, the URL is set on the <img> directly as a fallback (with no referrer); the
 *    CSP decides whether that loads, and a failure shows a visible "could not load" note.
 *  - http(s) from any other host: a placeholder with the alt text and a button
 *    "Load image from <host>"; pressing it allows the host (policy.allow) and every placeholder for
 *    that host, in every renderer sharing the policy, is replaced by the image.
 *  - data: URLs: shown inline only for raster types (png, jpeg, gif, webp, avif) whose bytes match
 *    the declared type, up to MAX_DATA_URL_CHARS. They cost no network request and reveal nothing,
 *    so they need no permission. SVG and anything else are replaced by a note.
 *  - anything else (relative, blob:, javascript:, file:...): a note, never loaded.
 */
import { IMAGE_SOURCE_ATTR } from "./sanitize.js";
import { MAX_MEDIA_BYTES, MediaError, sniffImage } from "./media_bytes.js";

export const MAX_DATA_URL_CHARS = 2 * 1024 * 1024;

export const DEFAULT_IMAGE_LABELS = {
  loadImage: (host) => `Load image from ${host}`,
  imageNotShown: "Image not shown",
  imageFailed: (host) => `Could not load the image from ${host}`,
};

const normalHost = (host) => String(host).trim().toLowerCase();

export class ImagePolicy {
  #hosts;
  #onChange;
  #listeners = new Set();

  constructor(allowedHosts = [], onChange = undefined) {
    this.#hosts = new Set(allowedHosts.map(normalHost));
    this.#onChange = onChange;
  }

  isAllowed(host) {
    return this.#hosts.has(normalHost(host));
  }

  allow(host) {
    const key = normalHost(host);
    if (!key || this.#hosts.has(key)) return;
    this.#hosts.add(key);
    this.#onChange?.(this.hosts());
    for (const listener of [...this.#listeners]) listener(key);
  }

  hosts() {
    return [...this.#hosts];
  }

  subscribe(listener) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

// Placeholders waiting for their host to be allowed, per policy: {url, alt, title, labels}.
const waiting = new WeakMap();

function placeholdersOf(policy) {
  let entries = waiting.get(policy);
  if (!entries) {
    entries = new Map();
    waiting.set(policy, entries);
    policy.subscribe((host) => {
      for (const [element, image] of entries) {
        if (image.url.host !== host) continue;
        entries.delete(element);
        if (element.isConnected) element.replaceWith(loadedImage(image));
      }
    });
  }
  return entries;
}

function forget(entries) {
  for (const element of entries.keys()) if (!element.isConnected) entries.delete(element);
}

export function placeImages(root, policy, labels = DEFAULT_IMAGE_LABELS) {
  const images = root.querySelectorAll(`img[${IMAGE_SOURCE_ATTR}]`);
  if (!images.length) return;
  const entries = placeholdersOf(policy);
  forget(entries);
  for (const img of images) {
    const image = {
      source: img.getAttribute(IMAGE_SOURCE_ATTR),
      alt: img.getAttribute("alt") ?? "",
      title: img.getAttribute("title"),
      labels,
    };
    img.replaceWith(decide(image, policy, entries));
  }
}

function decide(image, policy, entries) {
  let url = null;
  try {
    url = new URL(image.source.trim());
  } catch {
    return note(image, image.labels.imageNotShown);
  }
  if (url.protocol === "data:") return dataImage(image);
  if (url.protocol !== "http:" && url.protocol !== "https:") return note(image, image.labels.imageNotShown);
  image.url = url;
  if (policy.isAllowed(url.host)) return loadedImage(image);
  const placeholder = document.createElement("span");
  placeholder.className = "md-image-placeholder";
  const alt = document.createElement("span");
  alt.className = "md-image-alt";
  alt.textContent = image.alt || image.labels.imageNotShown;
  const button = document.createElement("button");
  button.type = "button";
  button.className = "md-image-load";
  button.textContent = image.labels.loadImage(url.host);
  button.addEventListener("click", () => policy.allow(url.host));
  placeholder.append(alt, " ", button);
  entries.set(placeholder, image);
  return placeholder;
}

function note(image, text) {
  const span = document.createElement("span");
  span.className = "md-image-note";
  span.textContent = image.alt ? `${text}: ${image.alt}` : text;
  return span;
}

function imageElement(image) {
  const img = document.createElement("img");
  img.className = "md-image";
  img.alt = image.alt;
  if (image.title) img.title = image.title;
  img.referrerPolicy = "no-referrer";
  img.decoding = "async";
  return img;
}

const DATA_IMAGE = /^data:(image\/(?:png|jpeg|jpg|gif|webp|avif));base64,([A-Za-z0-9+/=]+)$/i;

function dataImage(image) {
  const compact = image.source.replace(/\s+/g, "");
  const match = DATA_IMAGE.exec(compact);
  if (!match || compact.length > MAX_DATA_URL_CHARS) return note(image, image.labels.imageNotShown);
  let head;
  try {
    head = Uint8Array.from(atob(match[2].slice(0, 64)), (c) => c.charCodeAt(0));
  } catch {
    return note(image, image.labels.imageNotShown);
  }
  const declared = match[1].toLowerCase().replace("image/jpg", "image/jpeg");
  if (sniffImage(head) !== declared) {
    return note(image, image.labels.imageNotShown);
  }
  const img = imageElement(image);
  img.src = `data:${declared};base64,${match[2]}`;
  return img;
}

// url -> Promise<blob: URL>; an image is fetched once per page however often a block re-renders.
const fetched = new Map();

async function fetchImage(url) {
  const response = await fetch(url, {
    mode: "cors", credentials: "omit", referrerPolicy: "no-referrer", redirect: "error", cache: "force-cache",
  });
  if (!response.ok) throw new MediaError(`HTTP ${response.status}`);
  const length = Number(response.headers.get("content-length") ?? 0);
  if (length > MAX_MEDIA_BYTES) throw new MediaError("the image is too large");
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (bytes.length > MAX_MEDIA_BYTES) throw new MediaError("the image is too large");
  const type = sniffImage(bytes);
  if (type === null) throw new MediaError("not a raster image");
  return URL.createObjectURL(new Blob([bytes], { type }));
}

function loadedImage(image) {
  const img = imageElement(image);
  const key = image.url.href;
  if (!fetched.has(key)) fetched.set(key, fetchImage(key));
  const failed = () => {
    if (img.isConnected) img.replaceWith(note(image, image.labels.imageFailed(image.url.host)));
  };
  fetched.get(key).then(
    (objectUrl) => { img.src = objectUrl; },
    (error) => {
      if (!(error instanceof TypeError)) return failed();
      // No CORS read allowed (or offline): let the browser try the URL itself, under the CSP.
      fetched.delete(key);
      img.addEventListener("error", failed, { once: true });
      img.src = key;
      return undefined;
    },
  );
  return img;
}
