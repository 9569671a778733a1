/**
 * Which images may load, and what stands in for the ones that may not (SECURITY.md T-X11).
 *
 *   new ImagePolicy(allowedHosts = [], onChange?)   hosts the user always allows ("host" or "host:port")
 *     .allows(url)            may this image (a URL object) load: its URL or its host was allowed
 *     .allowImage(href)       this one image (its exact URL), for the life of this page: kept in memory only
 *     .allowHost(host)        every image from the host, kept: onChange(hosts) is called, the app persists
 *     .removeHost(host)       the host asks again: onChange(hosts); what renders next gets placeholders
 *     .isAllowed(host) .hosts() .subscribe(fn) -> unsubscribe   fn({image: href} | {host} | {removed: host})
 *   placeImages(root, policy, labels)   turns every sanitized <img> under root into what may be shown
 *
 * The two choices on a placeholder, and why one image is not kept across a reload: "Load this image"
 * is consent to one request for one picture, now. Keeping it (in the stored message) would have the
 * page contact that host again each time the conversation is opened, unasked, and tell the host when
 * it is read; so it lasts as long as the page, where re-drawing the transcript (after every turn, on a
 * language change) keeps it shown without asking twice. "Always load images from <host>" is the
 * explicit, lasting choice: it is kept and listed in Settings, where it can be removed.
 *
 * What an <img> from untrusted content becomes:
 *  - http(s) whose URL or host the user allowed: the bytes are fetched by us (no credentials, no referrer,
 *    no redirects to some other host), checked to be a raster image by their magic bytes and shown from
 *    a blob: URL, which the site's CSP (img-src 'self' data: blob:) permits. If the host does not
 *    allow a CORS read, the URL is set on the <img> directly as a fallback (with no referrer); the
 *    CSP decides whether that loads, and a failure shows a visible "could not load" note.
 *  - any other http(s) image: a placeholder with the alt text and two buttons. "Load this image"
 *    (policy.allowImage) replaces the placeholders of that URL, and only those; "Always load images
 *    from <host>" (policy.allowHost) replaces every placeholder for the host. Both act in every
 *    renderer sharing the policy. Removing a host replaces nothing already shown: the app draws again.
 *  - data: URLs: shown inline only for raster types (png, jpeg, gif, webp, avif) whose bytes match
 *    the declared type, up to MAX_DATA_URL_CHARS. They cost no network request and reveal nothing,
 *    so they need no permission. SVG and anything else are replaced by a note.
 *  - anything else (relative, blob:, javascript:, file:...): a note, never loaded.
 */
import { IMAGE_SOURCE_ATTR } from "./sanitize.js";
import { MAX_MEDIA_BYTES, MediaError, sniffImage } from "./media_bytes.js";

export const MAX_DATA_URL_CHARS = 2 * 1024 * 1024;

/**
 * @typedef {{loadImage: (host: string) => string, alwaysLoadImages: (host: string) => string, imageNotShown: string,
 *   imageFailed: (host: string) => string}} ImageLabels
 * @typedef {{image?: string, host?: string, removed?: string}} ImageChange   what a policy was told: an image's
 *   URL loaded once, a host allowed, or a host removed
 * @typedef {{source: string, alt: string, title: string | null, labels: ImageLabels}} Image   an image as written
 * @typedef {Image & {url: URL}} RemoteImage   an http(s) image
 */

/** @type {ImageLabels} */
export const DEFAULT_IMAGE_LABELS = {
  loadImage: () => "Load this image",
  alwaysLoadImages: (host) => `Always load images from ${host}`,
  imageNotShown: "Image not shown",
  imageFailed: (host) => `Could not load the image from ${host}`,
};

/** @param {unknown} host */
const normalHost = (host) => String(host).trim().toLowerCase();

export class ImagePolicy {
  /** @type {Set<string>} */
  #hosts;
  /** @type {Set<string>} */
  #images = new Set(); // hrefs the user loaded one by one: this page only, never persisted
  /** @type {((hosts: string[]) => void) | undefined} */
  #onChange;
  /** @type {Set<(change: ImageChange) => void>} */
  #listeners = new Set();

  /**
   * @param {unknown} [allowedHosts]
   * @param {(hosts: string[]) => void} [onChange]
   */
  constructor(allowedHosts = [], onChange = undefined) {
    const saved = Array.isArray(allowedHosts) ? allowedHosts.filter((host) => typeof host === "string") : [];
    this.#hosts = new Set(saved.map(normalHost).filter(Boolean));
    this.#onChange = onChange;
  }

  /** @param {URL} url */
  allows(url) {
    return this.#images.has(url.href) || this.isAllowed(url.host);
  }

  /** @param {string} host */
  isAllowed(host) {
    return this.#hosts.has(normalHost(host));
  }

  /** @param {string} href */
  allowImage(href) {
    if (!href || this.#images.has(href)) return;
    this.#images.add(href);
    this.#tell({ image: href });
  }

  /** @param {string} host */
  allowHost(host) {
    const key = normalHost(host);
    if (!key || this.#hosts.has(key)) return;
    this.#hosts.add(key);
    this.#onChange?.(this.hosts());
    this.#tell({ host: key });
  }

  /** @param {string} host */
  removeHost(host) {
    const key = normalHost(host);
    if (!this.#hosts.delete(key)) return;
    this.#onChange?.(this.hosts());
    this.#tell({ removed: key });
  }

  /** @param {ImageChange} change */
  #tell(change) {
    for (const listener of [...this.#listeners]) listener(change);
  }

  hosts() {
    return [...this.#hosts];
  }

  /**
   * @param {(change: ImageChange) => void} listener
   * @returns {() => void}
   */
  subscribe(listener) {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }
}

// Placeholders waiting for their host to be allowed, per policy: {url, alt, title, labels}.
/** @type {WeakMap<ImagePolicy, Map<Element, RemoteImage>>} */
const waiting = new WeakMap();

/** @param {ImagePolicy} policy */
function placeholdersOf(policy) {
  const known = waiting.get(policy);
  if (known) return known;
  /** @type {Map<Element, RemoteImage>} */
  const entries = new Map();
  waiting.set(policy, entries);
  policy.subscribe(({ image: href, host }) => {
    if (!href && !host) return;
    for (const [element, image] of entries) {
      if (href ? image.url.href !== href : normalHost(image.url.host) !== host) continue;
      entries.delete(element);
      if (element.isConnected) element.replaceWith(loadedImage(image));
    }
  });
  return entries;
}

/** @param {Map<Element, RemoteImage>} entries */
function forget(entries) {
  for (const element of entries.keys()) if (!element.isConnected) entries.delete(element);
}

/**
 * @param {ParentNode} root
 * @param {ImagePolicy} policy
 * @param {ImageLabels} [labels]
 */
export function placeImages(root, policy, labels = DEFAULT_IMAGE_LABELS) {
  const images = root.querySelectorAll(`img[${IMAGE_SOURCE_ATTR}]`);
  if (!images.length) return;
  const entries = placeholdersOf(policy);
  forget(entries);
  for (const img of images) {
    const image = {
      source: img.getAttribute(IMAGE_SOURCE_ATTR) ?? "", // there: the selector asked for it
      alt: img.getAttribute("alt") ?? "",
      title: img.getAttribute("title"),
      labels,
    };
    img.replaceWith(decide(image, policy, entries));
  }
}

/**
 * @param {Image} image
 * @param {ImagePolicy} policy
 * @param {Map<Element, RemoteImage>} entries
 * @returns {Element}
 */
function decide(image, policy, entries) {
  let url = null;
  try {
    url = new URL(image.source.trim());
  } catch {
    return note(image, image.labels.imageNotShown);
  }
  if (url.protocol === "data:") return dataImage(image);
  if (url.protocol !== "http:" && url.protocol !== "https:") return note(image, image.labels.imageNotShown);
  const remote = Object.assign(image, { url });
  if (policy.allows(url)) return loadedImage(remote);
  const placeholder = document.createElement("span");
  placeholder.className = "md-image-placeholder";
  const alt = document.createElement("span");
  alt.className = "md-image-alt";
  alt.textContent = image.alt || image.labels.imageNotShown;
  const once = button("md-image-load", image.labels.loadImage(url.host), () => policy.allowImage(url.href));
  once.title = url.href; // what one click fetches, for whoever wants to see it first
  const always = button("md-image-always", image.labels.alwaysLoadImages(url.host), () => policy.allowHost(url.host));
  placeholder.append(alt, " ", once, " ", always);
  entries.set(placeholder, remote);
  return placeholder;
}

/**
 * @param {string} className
 * @param {string} text
 * @param {() => void} onClick
 */
function button(className, text, onClick) {
  const element = document.createElement("button");
  element.type = "button";
  element.className = className;
  element.textContent = text;
  element.addEventListener("click", onClick);
  return element;
}

/**
 * @param {Image} image
 * @param {string} text
 */
function note(image, text) {
  const span = document.createElement("span");
  span.className = "md-image-note";
  span.textContent = image.alt ? `${text}: ${image.alt}` : text;
  return span;
}

/** @param {Image} image */
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

/** @param {Image} image */
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
/** @type {Map<string, Promise<string>>} */
const fetched = new Map();

/**
 * @param {string} url
 * @returns {Promise<string>}
 */
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

/** @param {RemoteImage} image */
function loadedImage(image) {
  const img = imageElement(image);
  const key = image.url.href;
  const bytes = fetched.get(key) ?? fetchImage(key);
  fetched.set(key, bytes);
  const failed = () => {
    if (img.isConnected) img.replaceWith(note(image, image.labels.imageFailed(image.url.host)));
  };
  bytes.then(
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
