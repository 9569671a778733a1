"""The guard for paginated lists (MCP 2025-11-25 "Pagination"): cursors are opaque, never parsed or
kept across sessions; a server that repeats a cursor or never stops is cut off with an error."""

from __future__ import annotations

from pycore.mcp.errors import MCPPaginationError

MAX_PAGES = 100


class CursorGuard:
    def __init__(self, method: str, max_pages: int = MAX_PAGES) -> None:
        self._method = method
        self._max_pages = max_pages
        self._seen: set[str] = set()
        self.pages = 0

    def next(self, cursor: str | None) -> str | None:
        """Record a page; the cursor to ask for next, or ``None`` when the list is complete."""
        self.pages += 1
        if cursor is None:
            return None
        if cursor in self._seen:
            raise MCPPaginationError(f"{self._method}: the server repeated cursor {cursor[:40]!r}; stopped")
        if self.pages >= self._max_pages:
            raise MCPPaginationError(f"{self._method}: more than {self._max_pages} pages; stopped")
        self._seen.add(cursor)
        return cursor
