"""The user's Python tools (Tools → Python tools), in a sandbox of their own.

pycore's own code makes each public function of a set a tool (its schema from the type hints, its arguments
checked by pydantic, a failure naming the line), here rather than in the core's worker, so that the functions
never share a scope with the keys, the tokens or the core's state.

    host = ToolHost()
    host.define(set_id, source) -> JSON {"tools": [{name, description, inputSchema}]} | {"error"}
    await host.call(set_id, name, arguments_json, call_id) -> JSON {content, is_error, structured_content}

JSON text in and out: the worker passes strings across the JS/Python border, so nothing proxied is left behind.
"""

from __future__ import annotations

import json

from pycore.agent.python_tools import ToolSourceError, tools_from_source
from pycore.agent.tools import AgentTool, ToolContext


class ToolHost:
    """The tool sets the user defined, by set id: each in a namespace of its own."""

    def __init__(self) -> None:
        self.sets: dict[str, dict[str, AgentTool]] = {}

    def define(self, set_id: str, source: str) -> str:
        """Define (or, with empty source, forget) a set; its tools as the model will see them, or the problem."""
        if not source.strip():
            self.sets.pop(set_id, None)
            return json.dumps({"tools": []})
        try:
            tools = tools_from_source(set_id, source)
        except ToolSourceError as e:
            return json.dumps({"error": str(e)})
        self.sets[set_id] = {tool.name: tool for tool in tools}
        return json.dumps({"tools": [{"name": t.name, "description": t.description, "inputSchema": t.input_schema}
                                     for t in tools]})

    async def call(self, set_id: str, name: str, arguments: str, call_id: str) -> str:
        """Call one tool with the model's arguments (JSON); an unknown tool is an error result naming those known."""
        tool = self.sets.get(set_id, {}).get(name)
        if tool is None:
            known = ", ".join(self.sets.get(set_id, {})) or "none"
            return json.dumps({"content": [{"type": "text", "text": f"no Python tool {name!r} (defined: {known})"}],
                               "is_error": True})
        result = await tool.handler(json.loads(arguments), ToolContext(call_id=call_id))
        return json.dumps({"content": result.content, "is_error": result.is_error,
                           "structured_content": result.structured}, default=str)
