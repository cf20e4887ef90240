"""The review page's local server: standard library only, bound to 127.0.0.1 on a free port.

Everything in an export is hostile input, so the page never turns data into markup: the script
builds the DOM with `textContent` only, and every response forbids inline script and any
other origin (Content-Security-Policy). Requests must name this server as their Host (no DNS
rebinding), and the one request that writes, the clean export, must carry the page's token,
which another origin cannot read. Another user of the host is no origin but can connect to
127.0.0.1 all the same, so the server answers only connections opened by the user who started
it (`_peer`), before anything else: another user, or a connection whose user is unknown, gets
403 and neither the page, its token nor the export. The token lives in memory only.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Self
from urllib.parse import unquote, urlsplit

from selfbench._json import Json, JsonObject, JsonValue
from selfbench.errors import ArchiveError, ExportError, SelfbenchError, translating
from selfbench.export.reader import read_export
from selfbench.export.writer import same_file, write_clean_export
from selfbench.review._peer import peer_uid
from selfbench.review.data import ReviewData, load_review

__all__ = ["ReviewServer", "clean_export_path", "open_review"]

_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_STATIC = {
    "/static/review.js": ("review.js", "text/javascript; charset=utf-8"),
    "/static/review.css": ("review.css", "text/css; charset=utf-8"),
}
_MAX_BODY = 1 << 20
_TOKEN_HEADER = "X-Selfbench-Token"  # noqa: S105 - a header name, not a secret


def clean_export_path(export: Path) -> Path:
    """Where a clean export goes by default: beside the export, `NAME.clean.tar.gz`."""
    stem = export.name.removesuffix(".tar.gz").removesuffix(".tgz")
    return export.with_name(f"{stem}.clean.tar.gz")


def _asset(name: str) -> bytes:
    return resources.files("selfbench.review").joinpath("static", name).read_bytes()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "selfbench-review"
    sys_version = ""
    peer: int | None
    """The uid that opened this connection, None when it cannot be found."""

    def setup(self) -> None:
        """Find who opened the connection as it is accepted, before any of it is read."""
        super().setup()
        self.peer = peer_uid(self.connection)

    def parse_request(self) -> bool:
        """Read the request line and headers; answer any user but the owner 403 and stop."""
        if not super().parse_request():
            return False
        refusal = self._refusal()
        if refusal is None:
            return True
        self.close_connection = True  # the body, if any, is not read
        self._error(HTTPStatus.FORBIDDEN, refusal)
        return False

    def _refusal(self) -> str | None:
        if self.peer is None:
            return "cannot tell which user opened this connection; only the page's owner is served"
        if self.peer != self.server.owner:
            return "this review page serves only the user who started it"
        return None

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        """Quiet: the terminal shows the URL, not every request."""

    def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", _POLICY)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, value: Json, status: HTTPStatus = HTTPStatus.OK) -> None:
        body = json.dumps(value, ensure_ascii=False).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8")

    def _error(self, status: HTTPStatus, message: str) -> None:
        self._json({"error": message}, status)

    def _host_ok(self) -> bool:
        port = self.server.server_address[1]
        return self.headers.get("Host") in (f"127.0.0.1:{port}", f"localhost:{port}")

    def do_GET(self) -> None:
        if not self._host_ok():
            self._error(HTTPStatus.FORBIDDEN, "unexpected Host header")
            return
        path = urlsplit(self.path).path
        data = self.server.data
        if path == "/":
            page = _asset("index.html").replace(b"{{token}}", self.server.token.encode())
            self._send(HTTPStatus.OK, page, "text/html; charset=utf-8")
        elif path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        elif path in _STATIC:
            name, content_type = _STATIC[path]
            self._send(HTTPStatus.OK, _asset(name), content_type)
        elif path == "/api/export":
            self._json({**data.summary(), "cleanExport": str(self.server.clean_out)})
        elif path.startswith("/api/tasks/"):
            detail = data.detail(unquote(path.removeprefix("/api/tasks/")))
            if detail is None:
                self._error(HTTPStatus.NOT_FOUND, "no such task")
            else:
                self._json(detail)
        else:
            self._error(HTTPStatus.NOT_FOUND, "not found")

    def _length(self) -> int | None:
        """The request's Content-Length, or None when it is malformed or out of bounds."""
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return None
        return length if 0 < length <= _MAX_BODY else None

    def _body(self, length: int) -> JsonValue:
        try:
            value: JsonValue = json.loads(self.rfile.read(length))
        except ValueError:
            return None
        return value

    def do_POST(self) -> None:
        token = self.headers.get(_TOKEN_HEADER, "")
        if not self._host_ok() or not secrets.compare_digest(token, self.server.token):
            self._error(HTTPStatus.FORBIDDEN, "this page's token is required")
            return
        if urlsplit(self.path).path != "/api/clean-export":
            self._error(HTTPStatus.NOT_FOUND, "not found")
            return
        length = self._length()
        if length is None:
            self.close_connection = True  # the body, if any, is not read
            self._error(HTTPStatus.BAD_REQUEST, f"Content-Length must be 1 to {_MAX_BODY}")
            return
        body = self._body(length)
        drop = body.get("drop") if isinstance(body, dict) else None
        names = [item for item in drop if isinstance(item, str)] if isinstance(drop, list) else []
        if not isinstance(drop, list) or len(names) != len(drop):
            self._error(HTTPStatus.BAD_REQUEST, 'expected {"drop": [taskId, ...]}')
            return
        try:
            self._json(self.server.write_clean(frozenset(names)))
        except ArchiveError as exc:  # the export on disk is no longer the one reviewed
            self._error(HTTPStatus.CONFLICT, str(exc))
        except SelfbenchError as exc:
            self._error(HTTPStatus.BAD_REQUEST, str(exc))


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, data: ReviewData, clean_out: Path, port: int) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.data = data
        self.clean_out = clean_out
        self.token = secrets.token_urlsafe(24)
        self.owner = os.geteuid()  # the uid the kernel lists for this process's sockets
        self._writing = threading.Lock()

    def write_clean(self, drop: frozenset[str]) -> JsonObject:
        """Write the clean export of what was reviewed, and verify it.

        Raises:
            ArchiveError: the export on disk is not the one loaded (changed since); nothing
                is written.
            ExportError: a drop names no task, the write failed, or what was written does not
                verify (it is then removed).
        """
        with self._writing:
            manifest = write_clean_export(
                self.data.export, self.clean_out, drop=drop, expected=self.data.manifest
            )
            try:
                read_export(self.clean_out)  # what was written verifies, or it is removed
            except SelfbenchError as exc:
                self.clean_out.unlink(missing_ok=True)
                raise ExportError(
                    f"the clean export did not verify and was removed: {exc}"
                ) from exc
        return {"path": str(self.clean_out), "manifest": manifest.to_json()}


class ReviewServer:
    """A running review page for one export."""

    def __init__(self, data: ReviewData, *, clean_out: Path, port: int = 0) -> None:
        self.data = data
        self.clean_out = clean_out
        self._server = _Server(data, clean_out, port)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The page's address."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    def serve_forever(self) -> None:
        """Serve in this thread until `close` (or Ctrl-C)."""
        self._server.serve_forever(poll_interval=0.1)

    def start(self) -> ReviewServer:
        """Serve from a background thread."""
        self._thread = threading.Thread(target=self.serve_forever, name="selfbench-review")
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and remove the kept files."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()
        self.data.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def open_review(export: Path, *, clean_out: Path | None = None, port: int = 0) -> ReviewServer:
    """Verify `export` and bind its review page to 127.0.0.1 (port 0: a free one).

    Raises:
        ArchiveError: the export fails verification.
        ExportError: it cannot be read, or `clean_out` is the export itself.
    """
    target = clean_out or clean_export_path(export)
    if same_file(target, export):
        raise ExportError(f"a clean export must not replace its source: {target}")
    data = load_review(export)
    try:
        with translating(ExportError, f"listen on 127.0.0.1:{port}"):
            return ReviewServer(data, clean_out=target, port=port)
    except ExportError:
        data.close()
        raise
