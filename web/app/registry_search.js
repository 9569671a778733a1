/**
 * Tools → "Find a server in the MCP registry": searches a registry (the official one unless the user names
 * another; kept in orizuru.registryUrl) through the core (mcp.registry_search: pycore/mcp/registry.py), only when
 * the user presses Search, and lists what it found: each server's name, version and description as text, its
 * remote endpoints and its packages.
 *
 *   new RegistrySearch({core, ready, connect, fillIn})
 *     connect(url)             a remote that needs nothing more: connected as a URL the user added (the same
 *                              review, approval and trust choices)
 *     fillIn(url, headerNames) a remote that needs a header or a URL variable: put in the Add server form to finish
 *
 * A stdio package the relay can run shows the exact `mcpServers` entry (pycore.mcp.registry), with Copy.
 */

import { byId, h } from "./dom.js";
import { messageOf } from "./error_notice.js";
import { t } from "./i18n.js";
import { PREFS, prefs } from "../store/prefs.js";

export const OFFICIAL_REGISTRY = "https://registry.modelcontextprotocol.io";
const COPY_FEEDBACK_MS = 1500;

/**
 * @typedef {import("../types/contract").RegistryServer} RegistryServer
 * @typedef {import("../types/contract").RegistryRemote} RegistryRemote
 * @typedef {import("../types/contract").RegistryPackage} RegistryPackage
 */

export class RegistrySearch {
  /**
   * @param {{core: import("../client/orizuru.js").Agent, ready: Promise<unknown>,
   *   connect: (url: string) => unknown, fillIn: (url: string, headerNames: string[]) => unknown}} options
   */
  constructor({ core, ready, connect, fillIn }) {
    this.core = core;
    this.ready = ready;
    this.connect = connect;
    this.fillIn = fillIn;
    this.query = byId("registry-query", HTMLInputElement);
    this.url = byId("registry-url", HTMLInputElement);
    this.status = byId("registry-status");
    this.results = byId("registry-results");
    this.url.value = prefs.get(PREFS.registryUrl) || OFFICIAL_REGISTRY;
    this.url.addEventListener("change", () => {
      const url = this.url.value.trim();
      if (url && url !== OFFICIAL_REGISTRY) prefs.set(PREFS.registryUrl, url);
      else prefs.remove(PREFS.registryUrl);
    });
    byId("registry-search").addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.search();
    });
  }

  async search() {
    const query = this.query.value.trim();
    const url = this.url.value.trim() || OFFICIAL_REGISTRY;
    const host = hostOf(url);
    if (!query) return;
    this.status.textContent = t("tools.registrySearching", { host });
    this.results.replaceChildren();
    try {
      await this.ready;
      const found = /** @type {import("../types/contract").RegistryResults} */ (
        await this.core.call("mcp.registry_search", { url, query }));
      this.status.textContent = found.servers.length
        ? t("tools.registryFound", { host, count: found.servers.length }) : t("tools.registryNone", { host, query });
      this.results.replaceChildren(...found.servers.map((server) => this.#item(server)));
    } catch (err) {
      this.status.textContent = t("tools.registryFailed", { message: messageOf(err) });
    }
  }

  /** @param {RegistryServer} server */
  #item(server) {
    return h("li", { className: "server registry-server", dataset: { name: server.name } },
      h("div", { className: "server-head" },
        h("strong", {}, server.title || server.name),
        server.title ? h("code", {}, server.name) : null,
        server.version ? h("span", { className: "hint" }, server.version) : null),
      server.description ? h("p", { className: "hint" }, server.description) : null,
      ...(server.remotes ?? []).map((remote) => this.#remote(remote)),
      ...(server.packages ?? []).map((pkg) => this.#package(pkg)));
  }

  /** @param {RegistryRemote} remote */
  #remote(remote) {
    const needs = remote.needs ?? [];
    const headers = (remote.headers ?? []).filter((header) => header.required).map((header) => header.name);
    const ready = !needs.length && !headers.length;
    const button = ready
      ? h("button", { type: "button", className: "primary", onclick: () => this.connect(remote.url) },
          t("tools.registryConnect", { url: remote.url }))
      : h("button", { type: "button", onclick: () => this.fillIn(remote.url, headers) },
          t("tools.registryUseUrl", { url: remote.url }));
    return h("div", { className: "registry-remote", dataset: { type: remote.type } },
      h("code", {}, remote.url),
      needs.length ? h("span", { className: "hint" }, t("tools.registryNeeds", { names: needs.join(", ") })) : null,
      headers.length ? h("span", { className: "hint" }, t("tools.registryHeaders", { names: headers.join(", ") })) : null,
      button);
  }

  /** @param {RegistryPackage} pkg */
  #package(pkg) {
    const vars = { kind: pkg.registry_type, identifier: pkg.identifier };
    if (!pkg.entry) return h("p", { className: "hint registry-package" }, t("tools.registryNoRunner", vars));
    const text = JSON.stringify(pkg.entry, null, 2);
    /** @type {HTMLButtonElement} */
    const copy = h("button", { type: "button", onclick: async () => {
      let said = t("chat.copied");
      try {
        await navigator.clipboard.writeText(text);
      } catch {
        said = t("chat.copyFailed");
      }
      copy.textContent = said;
      setTimeout(() => (copy.textContent = t("chat.copy")), COPY_FEEDBACK_MS);
    } }, t("chat.copy"));
    return h("div", { className: "registry-package" },
      h("p", { className: "hint" }, t("tools.registryPackage", vars)),
      h("pre", { className: "json-args" }, text), copy);
  }
}

/** @param {string} url */
function hostOf(url) {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
