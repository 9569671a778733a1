/**
 * The policy an MCP App view runs under: what its `ui://` resource declared (`_meta.ui.csp`, SEP-1865) and
 * nothing more. With nothing declared a view may run its own inline scripts and styles and show data: and
 * blob: images, and reach no host at all.
 *
 *   viewPolicy(csp, {local}) -> {policy, refused, unreachable, granted}   csp: {connectDomains, resourceDomains,
 *        frameDomains, baseUriDomains}; local: the view's server runs on this machine (isLocalServer);
 *        policy: the Content-Security-Policy text; refused: the declared entries that are not an origin this
 *        page lets a view name (https://host[:port], https://*.host under a registrable domain, or http on
 *        loopback), left out; unreachable: for a view of a server elsewhere, the declared entries on this machine
 *        or a private network (loopback, localhost, private and link-local addresses, .local/.internal names),
 *        left out as the OAuth URLs of such a server are (SECURITY.md T-W11); granted: what was kept, in the
 *        declaration's shape (told to the view as the host's sandbox)
 *   isLocalURL(url) -> boolean   the URL's host is this machine (localhost, *.localhost, 127.0.0.0/8, [::1])
 *   withPolicy(html, policy) -> html   the view's document with the policy as its first element
 *
 * A name a remote view declares may still resolve to a private address: the page cannot see DNS, so that is
 * left to the browser's Private Network Access rules.
 */

const LOOPBACK = /^http:\/\/(127\.0\.0\.1|localhost)(:(\d{1,5}|\*))?$/;
const SECURE = /^(https|wss):\/\/(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*(:(\d{1,5}|\*))?$/;
// Second-level labels under which anyone registers (co.uk, com.au, ne.jp …): a wildcard must name a domain below.
const SHARED_SECOND_LEVEL = new Set(["ac", "co", "com", "edu", "go", "gov", "ne", "net", "or", "org"]);
const PRIVATE_NAMES = /(^|\.)(localhost|local|internal|home\.arpa)$/;
// IPv4 ranges that are this machine, a private network, link-local, shared, benchmarking, multicast or reserved.
/** @type {[string, number][]} */
const PRIVATE_V4 = [["0.0", 8], ["10.0", 8], ["100.64", 10], ["127.0", 8], ["169.254", 16], ["172.16", 12],
                    ["192.0", 24], ["192.168", 16], ["198.18", 15], ["224.0", 3]];

/**
 * A wildcard over a whole top-level domain or a shared second level (`*.com`, `*.co.uk`) matches strangers.
 * @param {string} host
 */
function tooWide(host) {
  if (!host.startsWith("*.")) return false;
  const labels = host.slice(2).split(".");
  if (labels.length < 2 || !/^[a-z]/.test(labels[labels.length - 1])) return true;
  return labels.length === 2 && labels[1].length === 2 && SHARED_SECOND_LEVEL.has(labels[0]);
}

/**
 * A declared origin as a policy source, or null: no paths, keywords, quotes, spaces or semicolons.
 * @param {unknown} entry
 * @returns {string | null}
 */
export function origin(entry) {
  if (typeof entry !== "string") return null;
  const value = entry.trim().toLowerCase().replace(/\/$/, "");
  if (!(SECURE.test(value) || LOOPBACK.test(value))) return null;
  return tooWide(hostOf(value)) ? null : value;
}

/** @param {string} source */
const hostOf = (source) => source.replace(/^[a-z]+:\/\//, "").replace(/:(\d+|\*)$/, "");

/** @param {string} host */
function privateV4(host) {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) < 256)) return false;
  const value = parts.reduce((n, p) => n * 256 + Number(p), 0);
  return PRIVATE_V4.some(([start, bits]) => {
    const [a, b] = start.split(".").map(Number);
    const base = (a * 256 + b) * 65536;
    return Math.floor(value / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits));
  });
}

/**
 * A declared source on this machine or a private network (any all-numeric host that is not a public IPv4).
 * @param {string} source
 */
function privateSource(source) {
  const host = hostOf(source).replace(/^\*\./, "");
  if (PRIVATE_NAMES.test(host) || LOOPBACK.test(source)) return true;
  return /^[0-9.]+$/.test(host) && (privateV4(host) || host.split(".").length !== 4);
}

/** @param {string | URL} url */
export function isLocalURL(url) {
  let host;
  try {
    host = new URL(url, document.baseURI).hostname;
  } catch {
    return false;
  }
  return host === "[::1]" || host === "localhost" || host.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * @typedef {"resourceDomains" | "connectDomains" | "frameDomains" | "baseUriDomains"} DomainKey
 * @typedef {Record<DomainKey, string[]>} GrantedDomains   the declaration's shape, with what was kept
 */

/**
 * @param {{[key: string]: unknown} | null} [csp]   the resource's `_meta.ui.csp`, as the server sent it
 * @param {{local?: boolean}} [options]
 * @returns {{policy: string, refused: string[], unreachable: string[], granted: GrantedDomains}}
 */
export function viewPolicy(csp = {}, { local = false } = {}) {
  /** @type {string[]} */
  const refused = [];
  /** @type {string[]} */
  const unreachable = [];
  /** @param {DomainKey} key */
  const sources = (key) => {
    const declared = csp?.[key];
    /** @type {unknown[]} */
    const list = Array.isArray(declared) ? declared : [];
    /** @type {string[]} */
    const kept = [];
    for (const entry of list) {
      const value = origin(entry);
      if (!value) refused.push(String(entry).slice(0, 200));
      else if (!local && privateSource(value)) unreachable.push(value);
      else kept.push(value);
    }
    return kept;
  };
  /** @type {GrantedDomains} */
  const granted = { resourceDomains: [], connectDomains: [], frameDomains: [], baseUriDomains: [] };
  for (const key of /** @type {DomainKey[]} */ (["resourceDomains", "connectDomains", "frameDomains", "baseUriDomains"])) {
    granted[key] = sources(key);
  }
  const { resourceDomains: resources, connectDomains: connect, frameDomains: frames, baseUriDomains: bases } = granted;
  /** @param {...(string | string[])} items */
  const list = (...items) => items.flat().join(" ");
  const directives = [
    "default-src 'none'",
    `script-src ${list("'unsafe-inline'", resources)}`,
    `style-src ${list("'unsafe-inline'", resources)}`,
    `img-src ${list("data:", "blob:", resources)}`,
    `font-src ${list("data:", resources)}`,
    `media-src ${list("data:", "blob:", resources)}`,
    `connect-src ${connect.length ? list(connect) : "'none'"}`,
    `frame-src ${frames.length ? list(frames) : "'none'"}`,
    `base-uri ${bases.length ? list(bases) : "'none'"}`,
    "form-action 'none'",
    "object-src 'none'",
  ];
  return { policy: directives.join("; "), refused, unreachable, granted };
}

const DOCTYPE = /^\s*<!doctype[^>]*>/i;

/**
 * @param {string} html
 * @param {string} policy
 */
export function withPolicy(html, policy) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/"/g, "&quot;")}">`;
  const doctype = html.match(DOCTYPE)?.[0] ?? "<!doctype html>";
  return `${doctype}${meta}${html.slice(html.match(DOCTYPE)?.[0].length ?? 0)}`;
}
