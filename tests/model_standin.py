"""A local model stand-in: a loopback HTTP server speaking OpenAI Chat Completions, replaying a
scripted conversation (one `bash` tool call per reply), run as a process of its own.

    python model_standin.py SCRIPTS.json COUNTS.json

`SCRIPTS.json` maps a model name to its list of shell commands; the Nth request for that model
gets the Nth command as a `bash` tool call (the last one again once they run out). The server
prints its port on its first line of output, then serves until killed. After each request it
rewrites `COUNTS.json`: per model the requests, the prompt, completion and total tokens it
returned as `usage`, and the text of every tool result the harness sent back (what its commands
printed), so a test can check what the harness saw and count what it should report.

Tokens are counted the same way for every request (a prompt token per 4 characters of the request's
messages, a completion token per 4 characters of the reply's command, plus 8): exact, so the
harness's own count can be compared with it.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

_LOCK = threading.Lock()


class _State:
    def __init__(self, scripts: dict[str, list[str]], counts: Path) -> None:
        self.scripts = scripts
        self.counts_path = counts
        self.counts: dict[str, dict[str, Any]] = {}

    def reply(self, request: dict[str, Any]) -> dict[str, Any]:
        model = str(request.get("model", ""))
        script = self.scripts.get(model)
        if not script:
            raise KeyError(model)
        messages = request.get("messages") or []
        with _LOCK:
            counts = self.counts.setdefault(
                model,
                {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0,
                 "tools": [], "observations": [], "first_user": ""},
            )  # fmt: skip
            step = counts["requests"]
            command = script[min(step, len(script) - 1)]
            prompt = len(json.dumps(messages)) // 4
            completion = len(command) // 4 + 8
            counts["requests"] += 1
            counts["prompt_tokens"] += prompt
            counts["completion_tokens"] += completion
            counts["total_tokens"] += prompt + completion
            counts["tools"] = [
                tool.get("function", {}).get("name") for tool in request.get("tools") or []
            ]
            users = [m for m in messages if m.get("role") == "user"]
            counts["first_user"] = _text(users[0]) if users else ""
            if messages and messages[-1].get("role") == "tool":
                counts["observations"].append(_text(messages[-1]))
            self.counts_path.write_text(json.dumps(self.counts, indent=1), encoding="utf-8")
        return {
            "id": f"chatcmpl-standin-{step}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": f"Step {step + 1}.",
                        "tool_calls": [
                            {
                                "id": f"call_{step}",
                                "type": "function",
                                "function": {
                                    "name": "bash",
                                    "arguments": json.dumps({"command": command}),
                                },
                            }
                        ],
                    },
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                request = json.loads(self.rfile.read(length))
                body = state.reply(request)
            except (ValueError, KeyError) as exc:
                self._send(400, {"error": {"message": f"stand-in: {exc!r}"}})
                return
            self._send(200, body)

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
            sys.stderr.write(f"stand-in: {format % args}\n")

    return Handler


def main(argv: list[str]) -> int:
    scripts = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    state = _State(scripts, Path(argv[1]))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    sys.stdout.write(f"{server.server_address[1]}\n")
    sys.stdout.flush()
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
