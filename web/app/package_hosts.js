/**
 * Settings → "Code interpreter packages": the package hosts the code interpreter may use. None by default
 * (the standard library only). "Package indexes" (one URL per line; "Add PyPI" is the preset) serve
 * pure-Python wheels to micropip; "Pyodide package repository" serves Pyodide's own compiled packages
 * (numpy, pandas...). Every host a request may go to is listed here before any is made.
 *
 *   const hosts = new PackageHosts({element, onChange})   onChange({indexes, pyodide}) when saved
 *   hosts.value -> {indexes: [url], pyodide: url | null}   (kept in prefs: orizuru.interpreterPackages)
 *   hosts.render()
 */

import { h } from "./dom.js";
import { onLanguageChange, t } from "./i18n.js";
import { PREFS, prefs } from "../store/prefs.js";
import { hostsOf, PYPI } from "../sandbox/hosts.js";

/** @typedef {import("../sandbox/messages.js").PackageHosts} PackageHostsValue */


export class PackageHosts {
  /**
   * @param {{element: HTMLElement, onChange?: (value: PackageHostsValue) => void}} parts
   */
  constructor({ element, onChange = () => {} }) {
    onLanguageChange(() => this.render());
    this.element = element;
    this.onChange = onChange;
    /** @type {{indexes?: unknown, pyodide?: unknown} | null} what was saved, as parsed: checked here */
    const saved = prefs.getJSON(PREFS.interpreterPackages, {});
    const indexes = saved?.indexes;
    const pyodide = saved?.pyodide;
    /** @type {PackageHostsValue} */
    this.value = { indexes: Array.isArray(indexes) ? indexes.filter(isHttpUrl) : [], pyodide: isHttpUrl(pyodide) ? pyodide : null };
    this.render();
  }

  render() {
    const indexes = h("textarea", { id: "package-indexes", rows: 2, spellcheck: "false",
                                    placeholder: PYPI, "aria-describedby": "package-hosts-list" });
    indexes.value = this.value.indexes.join("\n");
    const repo = h("input", { id: "pyodide-repo", type: "url", spellcheck: "false", value: this.value.pyodide ?? "",
                              "aria-describedby": "package-hosts-list" });
    const status = h("p", { className: "status-line", "aria-live": "polite" });
    const save = () => {
      const lines = indexes.value.split("\n").map((l) => l.trim()).filter(Boolean);
      const bad = [...lines, repo.value.trim()].filter((u) => u && !isHttpUrl(u));
      if (bad.length) return void (status.textContent = t("packages.bad", { url: bad[0] }));
      this.value = { indexes: lines, pyodide: repo.value.trim() || null };
      prefs.setJSON(PREFS.interpreterPackages, this.value);
      this.onChange(this.value);
      this.render();
    };
    const hosts = hostsOf(this.value);
    this.element.replaceChildren(
      h("legend", {}, t("packages.title")),
      h("small", { className: "hint" }, t("packages.hint")),
      h("label", { for: "package-indexes" }, t("packages.indexes")), indexes,
      h("label", { for: "pyodide-repo" }, t("packages.pyodide")), repo,
      h("div", { className: "inline" },
        h("button", { type: "button", onclick: save }, t("packages.save")),
        h("button", { type: "button", onclick: () => {
          if (!indexes.value.includes(PYPI)) indexes.value = [indexes.value.trim(), PYPI].filter(Boolean).join("\n");
          save();
        } }, t("packages.addPypi"))),
      status,
      h("p", { id: "package-hosts-list", className: "hint" },
        hosts.length ? t("packages.hosts", { hosts: hosts.join(", ") }) : t("packages.none")));
  }
}

/**
 * @param {unknown} value
 * @returns {value is string}   an http(s) URL
 */
function isHttpUrl(value) {
  try {
    return typeof value === "string" && ["http:", "https:"].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}
