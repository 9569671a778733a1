// Ambient declarations the page and its workers add to the platform's globals. Each block names who owns it.

// --- h4: the service worker and the core's worker ---------------------------------------------------------
/** The line build.py writes at the top of dist/sw.js: the build's hash and every file to precache. */
declare var ORIZURU_BUILD: { version: string, precache: string[] } | undefined;
// --- end h4 -----------------------------------------------------------------------------------------------

// --- h7: web/files ----------------------------------------------------------------------------------------
/** pdf.js's minified build (what web/files/pdf.js bundles) has the types of the package's main module. */
declare module "pdfjs-dist/build/pdf.min.mjs" {
  export * from "pdfjs-dist";
}
// --- end h7 -----------------------------------------------------------------------------------------------
