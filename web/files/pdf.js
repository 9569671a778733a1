/**
 * The text of a PDF, read in the page by pdf.js (Mozilla's PDF library, self-hosted: bundled into its
 * own chunk and fetched the first time a PDF is attached; its worker runs beside the page's).
 *
 *   await pdfText(bytes) -> string     the pages' text, one paragraph per line, pages apart by a blank line
 *
 * pdf.js evaluates no code (the 6.x bundled here has no eval path and no isEvalSupported option; the page's
 * policy forbids eval besides), is told not to fetch anything (no font or CMap URLs, no range requests), and scripts
 * inside the PDF never run: only the text layer is read.
 */

import { GlobalWorkerOptions, getDocument } from "pdfjs-dist/build/pdf.min.mjs";

import { byId } from "../app/dom.js";

/** @type {Worker | null} */
let port = null;

/**
 * @param {Uint8Array} bytes   taken over by pdf.js (its buffer is transferred to the worker)
 * @returns {Promise<string>}
 */
export async function pdfText(bytes) {
  if (!port) {
    // The worker's bundle sits beside this chunk (build.py builds web/files/pdf_worker.js to assets/).
    port = new Worker(new URL(pdfWorkerUrl(), document.baseURI), { type: "module" });
    GlobalWorkerOptions.workerPort = port;
  }
  const task = getDocument({ data: bytes, disableFontFace: true, useSystemFonts: false,
                             disableRange: true, disableStream: true, disableAutoFetch: true, stopAtErrors: false,
                             verbosity: 0 }); // errors only: a missing font file is not the user's concern
  try {
    const pdf = await task.promise;
    const pages = [];
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      pages.push(content.items.map((item) => ("str" in item ? item.str + (item.hasEOL ? "\n" : "") : "")).join("").trim());
      page.cleanup();
    }
    return pages.join("\n\n");
  } finally {
    await task.destroy();
  }
}

/** @returns {string} */
function pdfWorkerUrl() {
  /** @type {Partial<import("../main.js").PageBoot>} */
  const boot = JSON.parse(byId("boot").textContent ?? "");
  if (!boot.pdfWorker) throw new Error("this build has no PDF reader (boot.pdfWorker is missing)");
  return boot.pdfWorker;
}
