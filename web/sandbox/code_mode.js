/**
 * Code mode (issue #33): the conversation's MCP tools, callable from the notebook's Python, as
 * `from orizuru import tools` then `await tools.call("<server>.<tool>", {...})` or `await tools.<server>.<tool>(...)`
 * (sandbox_py/code_tools.py makes the stubs). This module names them for Python and writes the compact API the
 * `python` tool's description gives the model; the page passes each call the code makes to the core's
 * `mcp.code_call_tool`, approved as the model's own calls are (web/app/code_calls.js).
 *
 * Whether the model gets the tools directly, through code, or both is the assistant's `tool_mode` (store/assistants.js).
 *   pythonName(text) -> an identifier   "get-sum" -> "get_sum"; the same name always gives the same identifier
 *   codeCatalog(servers) -> [Entry]     the tools code may call: each connected server's tools offered to the model
 *        and not turned off, named for Python (`server`, `tool`), with `ref` {server: its id, tool: its own name}
 *   apiText(catalog) -> text            the compact Python API, one line a tool, for the tool's description
 */

/** @typedef {import("../types/contract").ServerDescription} ServerDescription */
/** @typedef {import("../types/contract").ToolInfo} ToolInfo */
/**
 * @typedef {object} Entry   one tool, as the sandbox's Python takes it (sandbox_py.code_tools.Entry)
 * @property {string} server   the server's Python name
 * @property {string} tool   the tool's Python name
 * @property {string} name   its own name on its server
 * @property {string} description
 * @property {Record<string, unknown>} inputSchema
 * @property {{server: string, tool: string}} ref   the server's id and the tool's own name: what the call names
 * @property {Record<string, unknown> | null} [outputSchema]   its structured result's, if it declares one
 */
/** @typedef {{id: string, info?: ServerDescription | null, off?: (tool: string) => boolean}} CodeServer */

const KEYWORDS = new Set(("False None True and as assert async await break class continue def del elif else except " +
  "finally for from global if import in is lambda nonlocal not or pass raise return try while with yield").split(" "));

/** @param {string} text */
export function pythonName(text) {
  let name = String(text).replace(/[^A-Za-z0-9_]/g, "_").replace(/^_+|_+$/g, "") || "tool";
  if (/^[0-9]/.test(name)) name = `_${name}`;
  return KEYWORDS.has(name) ? `${name}_` : name;
}

/**
 * A server's Python name: the last part of the name it gives itself ("example-servers/everything" -> everything),
 * else of its address; a name two servers would share gets a number.
 * @param {CodeServer} server
 * @param {Set<string>} taken
 */
function serverName(server, taken) {
  const said = server.info?.server?.name || server.info?.url || server.id;
  const base = pythonName(said.split("/").filter(Boolean).pop() ?? said).toLowerCase();
  let name = base;
  for (let n = 2; taken.has(name); n += 1) name = `${base}_${n}`;
  taken.add(name);
  return name;
}

/**
 * @param {CodeServer[]} servers   the connected servers this run may use
 * @returns {Entry[]}
 */
export function codeCatalog(servers) {
  /** @type {Entry[]} */
  const out = [];
  const taken = new Set();
  for (const server of servers) {
    const tools = (server.info?.tools ?? []).filter((tool) => !tool.views_only && !server.off?.(tool.original_name));
    if (!tools.length) continue;
    const name = serverName(server, taken);
    const names = new Set();
    for (const tool of tools) {
      let python = pythonName(tool.original_name);
      while (names.has(python)) python = `${python}_`;
      names.add(python);
      out.push({ server: name, tool: python, name: tool.original_name, description: tool.description ?? "",
                 inputSchema: /** @type {Record<string, unknown>} */ (tool.inputSchema ?? { type: "object" }),
                 ref: { server: server.id, tool: tool.original_name }, outputSchema: tool.outputSchema ?? null });
    }
  }
  return out;
}

/** @type {Record<string, string>} */
const TYPES = { string: "str", integer: "int", number: "float", boolean: "bool", array: "list", object: "dict" };

/**
 * One tool as a line of Python: its stub's signature (required parameters first, the others `= None`) and the
 * first sentence of its description.
 * @param {Entry} entry
 */
function line(entry) {
  const schema = /** @type {{properties?: Record<string, {type?: unknown}>, required?: string[]}} */ (entry.inputSchema);
  const properties = schema.properties ?? {};
  const required = (schema.required ?? []).filter((name) => name in properties);
  const param = (/** @type {string} */ name) => `${name}: ${TYPES[String(properties[name]?.type)] ?? "Any"}`;
  const params = [...required.map(param),
    ...Object.keys(properties).filter((name) => !required.includes(name)).map((name) => `${param(name)} = None`)];
  const about = entry.description.split(/(?<=[.!?])\s|\n/, 1)[0].trim().slice(0, 160);
  const returns = entry.outputSchema ? ` -> dict(${Object.keys(
    /** @type {{properties?: Record<string, unknown>}} */ (entry.outputSchema).properties ?? {}).join(", ")})` : "";
  return `await tools.${entry.server}.${entry.tool}(${params.length ? `*, ${params.join(", ")}` : ""})${returns}` +
    (about ? `  # ${about}` : "");
}

/** @param {Entry[]} catalog */
export function apiText(catalog) {
  if (!catalog.length) return "";
  return "\n\nThis code can call the conversation's tools (each call is approved by the user, as a direct tool call " +
    "is): `from orizuru import tools, ToolDenied, ToolError`, then `await tools.call(\"<server>.<tool>\", {...})` " +
    "or a stub below. A call returns the tool's structured content if it has one, else its text. A call the user " +
    "denies raises ToolDenied; a tool's error raises ToolError. Results stay in the notebook: reduce them in Python " +
    "and print only what you need. help(tools.<server>.<tool>) shows a tool's parameters.\n" +
    catalog.map(line).join("\n");
}
