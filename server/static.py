"""The site's files, served precompressed where the build left a copy.

``build.py`` writes ``NAME.gz`` beside each large file that gzip shrinks (Pyodide's wasm falls from
9.6 MB to 3.6 MB); a request whose ``Accept-Encoding`` names gzip gets those bytes with
``Content-Encoding: gzip`` and the original's media type. Everything else is Starlette's
``StaticFiles`` unchanged. Brotli is left out: Python's standard library cannot write it.
"""

from __future__ import annotations

from pathlib import Path

from starlette.datastructures import Headers
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope


def accepts_gzip(scope: Scope) -> bool:
    """Whether the request's Accept-Encoding lists gzip without refusing it (``gzip;q=0``)."""
    for item in Headers(scope=scope).get("accept-encoding", "").split(","):
        name, _, params = item.strip().partition(";")
        if name.strip().lower() == "gzip":
            return params.replace(" ", "").lower() not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


class SiteFiles(StaticFiles):
    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code != 200 or not isinstance(response, FileResponse):
            return response
        packed = Path(f"{response.path}.gz")
        if not packed.is_file():
            return response
        response.headers["vary"] = "Accept-Encoding"
        if not accepts_gzip(scope):
            return response
        return FileResponse(packed, media_type=response.media_type, stat_result=packed.stat(),
                            headers={"content-encoding": "gzip", "vary": "Accept-Encoding"})
