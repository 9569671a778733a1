/**
 * Settings > Theme: "system" (the browser's light or dark), "light" or "dark", remembered in this
 * browser. The stylesheet's colours are light-dark() pairs; the choice only sets the page's
 * color-scheme (html[data-theme]), so every part of the page follows it at once.
 *
 *   applyTheme(prefs.get(PREFS.theme))   at start
 *   themeSelect(selectElement)           fills and wires the select
 *   shownTheme() -> "light" | "dark"     the scheme on screen now (the choice, else the browser's)
 */

import { h } from "./dom.js";
import { onLanguageChange, t } from "./i18n.js";
import { PREFS, prefs } from "../store/prefs.js";

/** @type {readonly string[]} */
export const THEMES = Object.freeze(["system", "light", "dark"]);

/** @param {string | null | undefined} theme */
export function applyTheme(theme) {
  const root = document.documentElement;
  if (theme === "light" || theme === "dark") root.dataset.theme = theme;
  else delete root.dataset.theme;
}

/** @returns {"light" | "dark"} */
export function shownTheme() {
  const chosen = document.documentElement.dataset.theme;
  if (chosen === "light" || chosen === "dark") return chosen;
  return window.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

/** @param {HTMLSelectElement} select */
export function themeSelect(select) {
  const draw = () => {
    select.replaceChildren(...THEMES.map((theme) => h("option", { value: theme }, t(`settings.theme.${theme}`))));
    const saved = prefs.get(PREFS.theme);
    select.value = saved !== null && THEMES.includes(saved) ? saved : "system";
  };
  draw();
  onLanguageChange(draw); // again after the language changed
  select.addEventListener("change", () => {
    prefs.set(PREFS.theme, select.value);
    applyTheme(select.value);
  });
}
