// ESLint (flat config) for every JavaScript file of the repository: `npm run lint` (eslint .) must
// report nothing. CommonJS because package.json sets no "type": an ES module here would make Node
// guess the module kind (and warn about it) on every run.
//
// Each file gets the globals of where it really runs:
//   web/            the page (browser), except web/worker.js (a module Web Worker hosting Pyodide)
//                   and web/sw.js (the service worker, registered as a classic script);
//   tests/**/*.js   the e2e harness pages (browser); tests/**/*.mjs run under Node;
//   bench/**/*.js   benchmark pages and their workers (browser or worker); bench/**/*.mjs Node.
const js = require("@eslint/js");
const { defineConfig, globalIgnores } = require("eslint/config");
const globals = require("globals");

module.exports = defineConfig([
  // Built, installed or downloaded files; the gitignored outputs as well (eslint does not read .gitignore).
  globalIgnores(["dist/", "node_modules/", ".venv/", ".cache/", "build/", ".dist-*/", "bench/**/results/"]),

  {
    files: ["**/*.{js,mjs,cjs}"],
    extends: [js.configs.recommended],
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // == only where it is the idiom for "null or undefined" (x == null); everywhere else ===.
      eqeqeq: ["error", "smart"],
      "no-unused-vars": ["error", {
        args: "after-used",
        argsIgnorePattern: "^_",
        varsIgnorePattern: "^_",
        caughtErrors: "all",
        caughtErrorsIgnorePattern: "^_",
        destructuredArrayIgnorePattern: "^_",
        // `const { a, ...rest } = x` drops `a` from rest on purpose.
        ignoreRestSiblings: true,
      }],
      "prefer-const": ["error", { destructuring: "all" }],
      "no-var": "error",
      // Mistakes that look like working code.
      "no-template-curly-in-string": "error", // "${x}" in quotes, meant as a template literal
      "no-self-compare": "error",
      "no-unmodified-loop-condition": "error",
      "no-unreachable-loop": "error",
      "array-callback-return": "error", // a map/filter/find callback that forgets to return
      "no-throw-literal": "error",
      "no-new-wrappers": "error",
      "no-eval": "error",
      "no-implied-eval": "error",
    },
  },

  // The page: ES modules bundled by esbuild.
  {
    files: ["web/**/*.js"],
    ignores: ["web/worker.js", "web/sw.js"], // globals merge across blocks: these get their own only
    languageOptions: { globals: globals.browser },
  },
  // The page's functions stay readable, in the spirit of ruff's C901 limit on the core (pyproject.toml): none
  // over 80 lines, none with more than 20 paths through it ("modified": a switch counts once, as a table of cases).
  {
    files: ["web/**/*.js"],
    rules: {
      "max-lines-per-function": ["error", { max: 80, skipBlankLines: true, skipComments: true }],
      complexity: ["error", { max: 20, variant: "modified" }],
    },
  },
  {
    files: ["web/worker.js"],
    languageOptions: { globals: globals.worker },
  },
  {
    // Registered with type "classic": an import here would fail in the browser. build.py prepends
    // `self.ORIZURU_BUILD = {...}` to the built copy.
    files: ["web/sw.js"],
    languageOptions: {
      sourceType: "script",
      globals: { ...globals.serviceworker, ORIZURU_BUILD: "readonly" },
    },
  },

  // Test harness pages (tests/e2e/*_harness) are bundled and loaded in Chromium; .mjs files run under Node.
  {
    files: ["tests/**/*.js"],
    languageOptions: { globals: globals.browser },
  },
  {
    files: ["tests/**/*.mjs", "bench/**/*.mjs", "web/types/*.mjs"],
    languageOptions: { globals: globals.node },
  },

  // Benchmark pages run in Chromium; their workers in a Web Worker.
  {
    files: ["bench/**/*.js"],
    ignores: ["bench/render/stream_worker.js", "bench/stream/worker.js"],
    languageOptions: { globals: globals.browser },
  },
  {
    files: ["bench/render/stream_worker.js", "bench/stream/worker.js"],
    languageOptions: { globals: globals.worker },
  },
  {
    // Loaded both as the page's module and as a module worker of itself (data-mode="worker").
    files: ["bench/boot/bare.js"],
    languageOptions: { globals: globals.worker }, // on top of the browser's (bench/**/*.js above)
  },

  // This file.
  {
    files: ["eslint.config.js"],
    languageOptions: { sourceType: "commonjs", globals: globals.node },
  },
]);
