// What the built site's /orizuru.js is (build.py writes it as `export * from "./assets/orizuru-<hash>.js"`, the
// bundle of client/orizuru.js): the type of `import ... from "../orizuru.js"` in examples/embed.js.
export * from "./client/orizuru.js";
