/**
 * The toolbar on rendered code blocks: the language's name and a Copy button.
 *
 *   addCodeToolbars(root, labels)   wraps each <pre> under root in <div class="md-code"> with a
 *                                   toolbar; labels = {copy, copied, copyFailed, openArtifact?}
 *   ARTIFACT_LANGUAGES              the fences that open as an artifact (web/artifacts/): language -> type
 *
 * The button copies the block's text with navigator.clipboard and says "Copied" for a moment; its
 * accessible name is the label (so screen readers announce "Copy code"). With `labels.openArtifact`, a block in
 * one of ARTIFACT_LANGUAGES (or xml that is an <svg>) gets an Open button too: it dispatches a bubbling
 * "artifact-open" event, detail {language, source}, for the app to open it in the artifact panel.
 */

/** @typedef {{copy: string, copied: string, copyFailed: string, openArtifact?: string}} CodeLabels */

/** @type {Readonly<Record<string, "html" | "svg" | "mermaid" | "markdown">>} */
export const ARTIFACT_LANGUAGES = Object.freeze({ html: "html", htm: "html", svg: "svg", mermaid: "mermaid",
                                                  markdown: "markdown", md: "markdown" });
const SVG_SOURCE = /^\s*(<\?xml[^>]*>\s*)?<svg[\s>]/i;

/**
 * The artifact type a block opens as, or null.
 * @param {string} language
 * @param {string} source
 */
export function artifactType(language, source) {
  const name = language.toLowerCase();
  return ARTIFACT_LANGUAGES[name] ?? (name === "xml" && SVG_SOURCE.test(source) ? "svg" : null);
}

/** @type {CodeLabels} */
export const DEFAULT_CODE_LABELS = { copy: "Copy code", copied: "Copied", copyFailed: "Copy failed" };

const FEEDBACK_MS = 1500;

/**
 * @param {ParentNode} root
 * @param {CodeLabels} [labels]
 */
export function addCodeToolbars(root, labels = DEFAULT_CODE_LABELS) {
  for (const pre of root.querySelectorAll("pre")) {
    const code = pre.querySelector("code");
    const language = /\blanguage-([\w+#.-]+)/.exec(code?.className ?? "")?.[1] ?? "";
    const frame = document.createElement("div");
    frame.className = "md-code";
    const bar = document.createElement("div");
    bar.className = "md-code-bar";
    const name = document.createElement("span");
    name.className = "md-code-language";
    name.textContent = language;
    bar.append(name, copyButton(pre, labels));
    if (labels.openArtifact && artifactType(language, pre.textContent ?? "")) {
      bar.append(openButton(pre, language, labels.openArtifact));
    }
    pre.replaceWith(frame);
    frame.append(bar, pre);
  }
}

/**
 * @param {HTMLPreElement} pre
 * @param {CodeLabels} labels
 */
function copyButton(pre, labels) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "md-code-copy";
  button.textContent = labels.copy;
  let timer = 0;
  button.addEventListener("click", async () => {
    let text = labels.copied;
    try {
      await navigator.clipboard.writeText((pre.textContent ?? "").replace(/\n$/, ""));  // marked ends code with "\n"
    } catch {
      text = labels.copyFailed;
    }
    button.textContent = text;
    clearTimeout(timer);
    timer = setTimeout(() => { button.textContent = labels.copy; }, FEEDBACK_MS);
  });
  return button;
}

/**
 * @param {HTMLPreElement} pre
 * @param {string} language
 * @param {string} label
 */
function openButton(pre, language, label) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "md-code-open";
  button.textContent = label;
  button.addEventListener("click", () => {
    const source = (pre.textContent ?? "").replace(/\n$/, "");
    button.dispatchEvent(new CustomEvent("artifact-open", { bubbles: true, detail: { language, source } }));
  });
  return button;
}
