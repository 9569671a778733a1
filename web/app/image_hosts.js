/**
 * Settings' list of the hosts whose images always load (the "Always load images from <host>" choice
 * on an image's placeholder, web/render/images.js), each with a Remove button.
 *
 *   new ImageHostsList({list, empty, images})   list: the <ul>; empty: the line shown when there is none;
 *                                               images: the app's ImagePolicy (its changes redraw the list)
 *   .render()                                   again when the language changes
 *
 * Host names came from model output: they go in as text.
 */

import { h } from "./dom.js";
import { onLanguageChange, t } from "./i18n.js";

export class ImageHostsList {
  /**
   * @param {{list: HTMLElement, empty: HTMLElement, images: import("../render/markdown.js").ImagePolicy}} parts
   */
  constructor({ list, empty, images }) {
    onLanguageChange(() => this.render());
    this.list = list;
    this.empty = empty;
    this.images = images;
    images.subscribe(() => this.render());
    this.render();
  }

  render() {
    const hosts = this.images.hosts().sort();
    this.list.replaceChildren(...hosts.map((host) => h("li", {},
      h("span", { className: "host" }, host),
      h("button", { type: "button", "aria-label": t("settings.removeHostLabel", { host }), onclick: () => this.#remove(host) },
        t("settings.removeHost")))));
    this.list.hidden = hosts.length === 0;
    this.empty.hidden = hosts.length > 0;
  }

  /** Remove a host; keep the keyboard in the list (the next host's button, else the "none" line). */
  /** @param {string} host */
  #remove(host) {
    const hosts = this.images.hosts().sort();
    const next = hosts[hosts.indexOf(host) + 1] ?? hosts[hosts.indexOf(host) - 1];
    this.images.removeHost(host);
    const buttons = [...this.list.querySelectorAll("button")];
    const target = next === undefined ? this.empty : buttons[this.images.hosts().sort().indexOf(next)];
    target?.focus();
  }
}
