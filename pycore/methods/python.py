"""``tools.python {id, source} -> {tools: [{name, description, inputSchema}]}``.

Each id keeps one tool set (its functions, live in the worker); sending new source for the same id
replaces the set, an empty source removes it. Problems in the source name the line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pycore.contract.params import PythonToolsParams
from pycore.contract.results import PythonTools, ToolDefinition
from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.methods._state import WorkerState

@method("tools.python", params=PythonToolsParams, result=PythonTools)
async def define_python_tools(params: PythonToolsParams, emit: Emit, worker: WorkerState) -> PythonTools:
    from pycore.agent.python_tools import tools_from_source

    set_id, source = params.id, params.source
    if not set_id:
        raise ValueError("tools.python needs an id for the tool set")
    if not source.strip():
        worker.tool_sets.pop(set_id, None)
        return PythonTools(tools=[])
    tools = tools_from_source(set_id, source)
    worker.tool_sets[set_id] = tools
    return PythonTools(tools=[ToolDefinition(name=t.name, description=t.description, input_schema=t.input_schema)
                              for t in tools])
