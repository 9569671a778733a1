"""The agent: tools from anywhere, approval, and the loop that runs them.

- :mod:`pycore.agent.tools`: a tool (definition + handler + source + annotations), its result, and
  the registry that gives every tool a name each vendor accepts and maps it back;
- :mod:`pycore.agent.python_tools`: Python functions (and user-written source text) as tools;
- :mod:`pycore.agent.mcp_tools`: an MCP session's tools as tools;
- :mod:`pycore.agent.approval`: ask / allow / deny per tool, defaults from MCP annotations;
- :mod:`pycore.agent.loop`: send → stream → tool calls → approval → run → feed back → repeat.

Nothing is imported here, so importing one module does not pull in the others.
"""
