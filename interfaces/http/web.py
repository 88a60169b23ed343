"""The chat page (`/`), the agent builder (`/builder`) and their static files under `/web/`, served
from the package (interfaces/web/).

Public, like any static site: the files hold no data. The page itself asks for a key only when the
API answers 401, and sends it as `Authorization: Bearer` to `/api/` (never in a URL).
Every answer carries a Content-Security-Policy that forbids inline scripts and styles and any other
origin, so that text an answer smuggles in as HTML could not run even if the sanitiser missed it.
These routes stay out of /openapi.json: they are not part of the API.
"""

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, JSONResponse, Response

WEB_ROOT = (Path(__file__).resolve().parent.parent / "web").resolve()

# Images only inline (data:): an image from elsewhere, in an answer, would be a zero-click way to
# send what the page shows to that host (`![](https://host/?q=…)`).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # A page whose files change with the package: revalidate, so an upgrade is seen at once.
    "Cache-Control": "no-cache",
}
# Only these kinds are served (nosniff makes the browser hold the type to its word; a module
# script must come as JavaScript whatever the platform's mimetypes table says about `.mjs`).
MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}

router = APIRouter(include_in_schema=False)


def web_file(relative: str) -> Path | None:
    """The file `relative` names inside WEB_ROOT, or None: outside it (`..`, a link out), missing, or
    of a kind not served (the vendoring script and its VERSIONS list stay private)."""
    candidate = (WEB_ROOT / relative).resolve()
    if not candidate.is_relative_to(WEB_ROOT) or not candidate.is_file():
        return None
    return candidate if candidate.suffix in MEDIA_TYPES else None


def file_response(path: Path | None) -> Response:
    if path is None:
        return JSONResponse({"code": "not_found", "message": "no such file"}, status_code=404,
                            headers=SECURITY_HEADERS)
    return FileResponse(path, media_type=MEDIA_TYPES[path.suffix], headers=SECURITY_HEADERS)


@router.get("/")
async def index() -> Response:
    """The chat page."""
    return file_response(web_file("index.html"))


@router.get("/builder")
async def builder() -> Response:
    """The agent builder: an account's agents, their drafts, versions, debug chat and stats."""
    return file_response(web_file("builder.html"))


@router.get("/web/{relative:path}")
async def static_file(relative: str) -> Response:
    """A script, style sheet or image of the page."""
    return file_response(web_file(relative))
