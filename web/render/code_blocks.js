/**
 * The toolbar on rendered code blocks: the language's name and a Copy button.
 *
 *   addCodeToolbars(root, labels)   wraps each <pre> under root in <div class="md-code"> with a
 *                                   toolbar; labels = {copy, copied, copyFailed}
 *
 * The button copies the block's text with navigator.clipboard and says "Copied" for a moment; its
 * accessible name is the label (so screen readers announce "Copy code").
 */

/** @typedef {{copy: string, copied: string, copyFailed: string}} CodeLabels */

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
