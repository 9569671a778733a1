// Code mode's catalog (web/sandbox/code_mode.js), in Node: which tools the code may call, under which Python names,
// and the API the model is told. The sandbox's stubs take these names as given (sandbox_py/code_tools.py).
import assert from "node:assert/strict";
import { test } from "node:test";
import { apiText, codeCatalog, pythonName } from "../../web/sandbox/code_mode.js";

/** @param {string} name @param {Record<string, unknown>} [more] */
const tool = (name, more = {}) => ({ name, original_name: name, description: `${name}. More words.`,
  inputSchema: { type: "object", properties: { a: { type: "number" }, note: { type: "string" } }, required: ["a"] },
  policy: "ask", fingerprint: "f", new: false, ...more });
/** @param {string} id @param {string} name @param {ReturnType<typeof tool>[]} tools */
const server = (id, name, tools, off = () => false) => ({ id, info: { id, url: id.slice(4), status: "connected",
  transport: "streamable-http", server: { name, version: "1" }, tools, resources: [], prompts: [] }, off });

test("names are Python identifiers: dashes, leading digits and keywords", () => {
  assert.equal(pythonName("get-sum"), "get_sum");
  assert.equal(pythonName("3d.render"), "_3d_render");
  assert.equal(pythonName("import"), "import_");
  assert.equal(pythonName("---"), "tool");
});

test("the catalog leaves out tools kept for views and tools turned off; two servers of one name get numbers", () => {
  const catalog = codeCatalog([
    server("url:http://a/mcp", "mcp-servers/everything", [tool("get-sum"), tool("view-only", { views_only: true })]),
    server("url:http://b/mcp", "everything", [tool("get-sum"), tool("get-env")], (name) => name === "get-env"),
  ]);
  assert.deepEqual(catalog.map((e) => [e.server, e.tool, e.ref.server, e.ref.tool]), [
    ["everything", "get_sum", "url:http://a/mcp", "get-sum"],
    ["everything_2", "get_sum", "url:http://b/mcp", "get-sum"],
  ]);
});

test("the API names each stub with its parameters and the first sentence of its description", () => {
  const text = apiText(codeCatalog([server("url:http://a/mcp", "orders", [tool("list-orders")])]));
  assert.match(text, /from orizuru import tools, ToolDenied, ToolError/);
  assert.ok(text.endsWith("await tools.orders.list_orders(*, a: float, note: str = None)  # list-orders."));
  assert.equal(apiText([]), "");
});

test("a tool that declares an output schema says the dict it returns", () => {
  const weather = tool("weather", { outputSchema: { type: "object", properties: { temperature: {}, sky: {} } } });
  const [entry] = codeCatalog([server("url:http://a/mcp", "sky", [weather])]);
  assert.deepEqual(entry.outputSchema, weather.outputSchema);
  assert.match(apiText([entry]), /tools\.sky\.weather\(\*, a: float, note: str = None\) -> dict\(temperature, sky\) {2}# weather\./);
});
