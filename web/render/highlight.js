/**
 * Syntax highlighting for fenced code: highlight.js core with a fixed set of common languages
 * registered explicitly (the full build would add ~1 MB to the bundle).
 *
 *   isKnownLanguage(language) -> bool                   highlightCode would highlight it
 *   highlightCode(text, language) -> {html, language}   html is escaped text wrapped in hljs spans;
 *                                                        language is the registered name or null
 *
 * A language we do not know is shown as plain escaped text (no auto-detection: it runs every grammar
 * on every update of a streaming block, which is slow and guesses wrong on short snippets).
 */
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import csharp from "highlight.js/lib/languages/csharp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import dockerfile from "highlight.js/lib/languages/dockerfile";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import kotlin from "highlight.js/lib/languages/kotlin";
import markdown from "highlight.js/lib/languages/markdown";
import php from "highlight.js/lib/languages/php";
import plaintext from "highlight.js/lib/languages/plaintext";
import python from "highlight.js/lib/languages/python";
import ruby from "highlight.js/lib/languages/ruby";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import swift from "highlight.js/lib/languages/swift";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

export const LANGUAGES = {
  bash, c, cpp, csharp, css, diff, dockerfile, go, ini, java, javascript, json, kotlin, markdown, php,
  plaintext, python, ruby, rust, shell, sql, swift, typescript, xml, yaml,
};
for (const [name, grammar] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, grammar);

/** @param {string} text */
export const escapeHtml = (text) => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** @param {unknown} language */
export function isKnownLanguage(language) {
  const name = String(language ?? "").toLowerCase();
  return Boolean(name) && Boolean(hljs.getLanguage(name));
}

/**
 * @param {string} text
 * @param {unknown} language
 * @returns {{html: string, language: string | null}}
 */
export function highlightCode(text, language) {
  const name = String(language ?? "").toLowerCase();
  if (!name || !hljs.getLanguage(name)) return { html: escapeHtml(text), language: null };
  return { html: hljs.highlight(text, { language: name, ignoreIllegals: true }).value, language: name };
}
