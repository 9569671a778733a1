/**
 * The policy an MCP App view runs under: what its `ui://` resource declared (`_meta.ui.csp`, SEP-1865) and
 * nothing more. With nothing declared a view may run its own inline scripts and styles and show data: and
 * blob: images, and reach no host at all.
 *
 *   viewPolicy(csp) -> {policy, refused, granted}   csp: {connectDomains, resourceDomains, frameDomains,
 *        baseUriDomains}; policy: the Content-Security-Policy text; refused: the declared entries that are not
 *        an origin this page lets a view name (https://host[:port], https://*.host, or http on loopback), left
 *        out; granted: what was kept, in the declaration's shape (told to the view as the host's sandbox)
 *   withPolicy(html, policy) -> html   the view's document with the policy as its first element
 */

const LOOPBACK = /^http:\/\/(127\.0\.0\.1|localhost)(:(\d{1,5}|\*))?$/;
const SECURE = /^(https|wss):\/\/(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*(:(\d{1,5}|\*))?$/;

/** A declared origin as a policy source, or null: no paths, keywords, quotes, spaces or semicolons. */
export function origin(entry) {
  if (typeof entry !== "string") return null;
  const value = entry.trim().toLowerCase().replace(/\/$/, "");
  return SECURE.test(value) || LOOPBACK.test(value) ? value : null;
}

export function viewPolicy(csp = {}) {
  const refused = [];
  const sources = (key) => {
    const list = Array.isArray(csp?.[key]) ? csp[key] : [];
    const kept = [];
    for (const entry of list) {
      const value = origin(entry);
      if (value) kept.push(value);
      else refused.push(String(entry).slice(0, 200));
    }
    return kept;
  };
  const granted = {};
  for (const key of ["resourceDomains", "connectDomains", "frameDomains", "baseUriDomains"]) granted[key] = sources(key);
  const { resourceDomains: resources, connectDomains: connect, frameDomains: frames, baseUriDomains: bases } = granted;
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
  return { policy: directives.join("; "), refused, granted };
}

const DOCTYPE = /^\s*<!doctype[^>]*>/i;

export function withPolicy(html, policy) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/"/g, "&quot;")}">`;
  const doctype = html.match(DOCTYPE)?.[0] ?? "<!doctype html>";
  return `${doctype}${meta}${html.slice(html.match(DOCTYPE)?.[0].length ?? 0)}`;
}
