/**
 * The code interpreter's messages, as types for both sides: the page (interpreter.js), the sandbox's frame
 * (frame.js) and its worker (worker.js). Types only: nothing here runs, and the frame and the worker, which are
 * not bundled, refer to it in comments alone.
 *
 *   page → frame     Start (once, when the frame says it is up)
 *   frame → page     FrameNews: up, crashed, or what its policy refused
 *   frame → worker   Boot (once; it brings the port the page and the worker talk over from then on)
 *   page → worker    PageRequest, numbered (over the port); ToolAnswer, the answer to a ToolCall
 *   worker → page    WorkerNews: ready, failed to start, a request's Result, or a ToolCall (over the port)
 */

/**
 * @typedef {object} PackageHosts   where packages may come from: none by default (the standard library only)
 * @property {string[]} indexes     the package indexes micropip may use
 * @property {string | null} pyodide   Pyodide's own repository (numpy, pandas...), or none
 */

/**
 * What a sandbox starts from: Pyodide's files, the sandbox's own Python (sandbox_py/) and micropip's wheel.
 * @typedef {{"pyodide.mjs": string, "pyodide.asm.mjs": string, "pyodide-lock.json": string,
 *   "pyodide.asm.wasm": ArrayBuffer, "python_stdlib.zip": ArrayBuffer, "sandbox_py.zip": ArrayBuffer,
 *   wheels: ArrayBuffer[]}} BootFiles
 */

/**
 * @typedef {{type: "start", files: BootFiles, source: string, packages: PackageHosts, port: MessagePort}} Start
 * @typedef {{type: "frame"} | {type: "crashed", message: string}
 *   | {type: "refused", directive: string, blocked: string}} FrameNews
 * @typedef {{type: "boot", files: BootFiles, packages: PackageHosts, port: MessagePort}} Boot
 */

/**
 * @typedef {{name: string, data: ArrayBuffer}} DataFile   a file of the conversation, for /mnt/data
 * @typedef {import("./code_mode.js").Entry} CodeTool   a tool the run's code may call (code mode)
 * @typedef {{type: "run", code: string, files: DataFile[], tools?: CodeTool[]}} RunRequest
 * @typedef {{type: "tool-host", wheels: ArrayBuffer[]}} ToolHostRequest   pydantic and pycore, before any tool set
 * @typedef {{type: "tools", set: string, source: string}} ToolsRequest   a tool set's source (empty: forget it)
 * @typedef {{type: "call", set: string, name: string, arguments: unknown, call_id: string}} CallRequest
 * @typedef {RunRequest | ToolHostRequest | ToolsRequest | CallRequest} PageRequest
 * @typedef {{type: "tool-answer", id: number, answer: string}} ToolAnswer   JSON {result} | {denied} | {error}
 */

/**
 * @typedef {{name: string, data: Uint8Array<ArrayBuffer>}} WrittenFile   a file the cell wrote under /mnt/outputs
 * @typedef {object} CellResult   a run's answer (sandbox_py.cell.CellResult, with the files' bytes)
 * @property {string} stdout
 * @property {string} stderr
 * @property {string | null} value   the last expression's repr
 * @property {string | null} error   the traceback of the cell's own frames
 * @property {WrittenFile[]} outputs
 * @property {number} memory   bytes of Python's heap after the run
 */

/**
 * @typedef {{name: string, description: string, inputSchema: Record<string, unknown>}} ToolDefinition
 * @typedef {{tools: ToolDefinition[], error?: undefined} | {error: string, tools?: undefined}} ToolsResult
 * @typedef {{type: "text", text: string} | {type: "image", data: string, mimeType: string}
 *   | {type: "resource", resource: {uri: string, mimeType?: string, blob?: string, text?: string}}} ContentItem
 * @typedef {{content: ContentItem[], is_error: boolean, structured_content?: unknown}} CallResult
 * @typedef {{error?: string}} ToolHostResult
 * @typedef {CellResult | ToolHostResult | ToolsResult | CallResult} Result
 * @typedef {{type: "ready", python: string} | {type: "boot-failed", message: string}
 *   | {type: "result", id: number, result: Result} | ToolCall} WorkerNews
 * @typedef {{type: "tool-call", id: number, request: string}} ToolCall   JSON {server, tool, arguments}
 */

export {};
