"""Orizuru's optional local relay: serves the built site and bridges stdio MCP servers."""
