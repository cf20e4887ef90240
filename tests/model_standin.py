"""A local model stand-in: a loopback HTTP server speaking OpenAI Chat Completions
(`/v1/chat/completions`, one `bash` tool call or a plain message per reply, streamed as
server-sent chunks when the request asks), the OpenAI Responses API
(`/v1/responses`, streamed as server-sent events, one `exec_command` function call per reply)
and Anthropic Messages (`/v1/messages`, streamed, one `Bash` tool use per reply), replaying a
scripted conversation, run as a process of its own.

It also speaks the Gemini API (`/v1beta/models/MODEL:generateContent`, and
`:streamGenerateContent?alt=sse` as server-sent events; one `run_shell_command` function call per
reply, `usageMetadata` its usage): the model is the path's, its `contents` the messages (a
`functionResponse` part a tool result).

    python model_standin.py SCRIPTS.json COUNTS.json [--tls CERT KEY]

With `--tls`, it serves HTTPS with that certificate chain and key (PEM files).

`SCRIPTS.json` maps a model name to its list of steps; the Nth request for that model gets the
Nth step (the last one again once they run out): a shell command as the API's tool call, or
`{"say": TEXT}`, a plain assistant message (how a Responses harness ends its turn; in Chat
Completions, how a harness that edits from the model's text, such as aider, gets its edit). The
server prints its port on its first line of output, then serves until killed. After each request it
rewrites `COUNTS.json`: per model the requests, the prompt, completion and total tokens it
returned as `usage`, and the text of every tool result the harness sent back (what its commands
printed), so a test can check what the harness saw and count what it should report.

Tokens are counted the same way for every request (a prompt token per 4 characters of the request's
messages, a completion token per 4 characters of the reply's command, plus 8): exact, so the
harness's own count can be compared with it.
"""

from __future__ import annotations

import json
import ssl
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

    def step(self, request: dict[str, Any], messages: list[dict[str, Any]]) -> tuple[Any, int, int]:
        """Count one request; its step, and the prompt and completion tokens it is billed."""
        model = str(request.get("model", ""))
        script = self.scripts.get(model)
        if not script:
            raise KeyError(model)
        with _LOCK:
            counts = self.counts.setdefault(
                model,
                {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0,
                 "tools": [], "observations": [], "first_user": ""},
            )  # fmt: skip
            step = script[min(counts["requests"], len(script) - 1)]
            prompt = len(json.dumps(messages)) // 4
            completion = len(json.dumps(step)) // 4 + 8
            counts["requests"] += 1
            counts["prompt_tokens"] += prompt
            counts["completion_tokens"] += completion
            counts["total_tokens"] += prompt + completion
            counts["tools"] = sorted(
                str(tool.get("name") or tool.get("function", {}).get("name"))
                for tool in request.get("tools") or []
            )
            users = [_text(m) for m in messages if m.get("role") == "user"]
            counts["first_user"] = "\n".join(users)
            last = messages[-1] if messages else {}
            if last.get("role") == "tool" or last.get("type") == "function_call_output":
                counts["observations"].append(_text(last))
            results = [b for b in _blocks(last) if b.get("type") == "tool_result"]
            counts["observations"].extend(_text(block) for block in results)
            self.counts_path.write_text(json.dumps(self.counts, indent=1), encoding="utf-8")
        return step, prompt, completion

    def chat(self, request: dict[str, Any]) -> dict[str, Any]:
        """A Chat Completions reply: the step as a `bash` tool call, or a plain assistant
        message."""
        messages = request.get("messages") or []
        step, prompt, completion = self.step(request, messages)
        number = len(messages)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "Next step.",
            "tool_calls": [
                {
                    "id": f"call_{number}",
                    "type": "function",
                    "function": {"name": "bash", "arguments": json.dumps({"command": step})},
                }
            ],
        }
        if isinstance(step, dict):  # a plain reply: a text-editing harness's edit, or an answer
            message = {"role": "assistant", "content": step["say"]}
        return {
            "id": f"chatcmpl-standin-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
                    "message": message,
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def chat_stream(self, request: dict[str, Any]) -> bytes:
        """A Chat Completions reply streamed as server-sent chunks (`"stream": true`): the
        reply `chat` gives, its tool call's arguments with a `description` too (OpenCode's
        `bash` tool asks for one), then its `usage`."""
        reply = self.chat(request)
        choice = reply["choices"][0]
        delta = dict(choice["message"])
        for index, call in enumerate(delta.get("tool_calls") or []):
            arguments = {**json.loads(call["function"]["arguments"]), "description": "Run it"}
            call["index"] = index
            call["function"]["arguments"] = json.dumps(arguments)
        head = {key: reply[key] for key in ("id", "created", "model")}
        chunk = {**head, "object": "chat.completion.chunk"}
        chunks: list[dict[str, Any]] = [
            {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {
                **chunk,
                "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
            },
            {**chunk, "choices": [], "usage": reply["usage"]},
        ]
        data = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks)
        return f"{data}data: [DONE]\n\n".encode()

    def responses(self, request: dict[str, Any]) -> bytes:
        """A Responses API reply, as server-sent events: the step as an `exec_command`
        function call, or a final message."""
        items = request.get("input") or []
        step, prompt, completion = self.step(request, items)
        number = len(items)
        if isinstance(step, dict):
            item: dict[str, Any] = {
                "type": "message", "id": f"msg_{number}", "role": "assistant",
                "content": [{"type": "output_text", "text": step["say"]}],
            }  # fmt: skip
        else:
            item = {
                "type": "function_call", "id": f"fc_{number}", "call_id": f"call_{number}",
                "name": "exec_command", "arguments": json.dumps({"cmd": step}),
            }  # fmt: skip
        usage = {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        }
        response = {"id": f"resp_{number}", "object": "response", "status": "completed"}
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": response},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {**response, "usage": usage}},
        ]
        return "".join(
            f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events
        ).encode()

    def messages(self, request: dict[str, Any]) -> bytes:
        """An Anthropic Messages reply, as server-sent events: the step as a `Bash` tool use, or
        a final text."""
        messages = request.get("messages") or []
        step, prompt, completion = self.step(request, messages)
        number = len(messages)
        message: dict[str, Any] = {
            "id": f"msg_{number}", "type": "message", "role": "assistant",
            "model": request.get("model"), "content": [], "stop_reason": None,
            "stop_sequence": None, "usage": {"input_tokens": prompt, "output_tokens": 1},
        }  # fmt: skip
        if isinstance(step, dict):
            block: dict[str, Any] = {"type": "text", "text": ""}
            delta: dict[str, Any] = {"type": "text_delta", "text": step["say"]}
            stop = "end_turn"
        else:
            block = {"type": "tool_use", "id": f"toolu_{number}", "name": "Bash", "input": {}}
            arguments = json.dumps({"command": step, "description": "Run a command"})
            delta = {"type": "input_json_delta", "partial_json": arguments}
            stop = "tool_use"
        events: list[dict[str, Any]] = [
            {"type": "message_start", "message": message},
            {"type": "content_block_start", "index": 0, "content_block": block},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
             "usage": {"output_tokens": completion}},
            {"type": "message_stop"},
        ]  # fmt: skip
        return "".join(
            f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events
        ).encode()

    def gemini(self, model: str, request: dict[str, Any], stream: bool) -> bytes:
        """A Gemini API reply (`generateContent`, or `streamGenerateContent` as server-sent
        events): the step as a `run_shell_command` function call, or a final text. Its
        `contents` are counted as messages: a `functionResponse` part as a tool result."""
        messages = [_gemini_message(content) for content in request.get("contents") or []]
        declarations = [
            declaration
            for tool in request.get("tools") or []
            for declaration in tool.get("functionDeclarations") or []
        ]
        counted = {"model": model, "tools": declarations}
        step, prompt, completion = self.step(counted, messages)
        if isinstance(step, dict):
            part: dict[str, Any] = {"text": step["say"]}
        else:
            arguments = {"command": step, "description": "Run a command"}
            part = {"functionCall": {"name": "run_shell_command", "args": arguments}}
        reply = {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": prompt,
                "candidatesTokenCount": completion,
                "totalTokenCount": prompt + completion,
            },
            "modelVersion": model,
        }
        return (
            f"data: {json.dumps(reply)}\r\n\r\n".encode() if stream else json.dumps(reply).encode()
        )


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text(message: dict[str, Any]) -> str:
    content = message.get("content", message.get("output"))
    if isinstance(content, list):
        parts = [part for part in content if isinstance(part, dict)]
        return "".join(str(part.get("text", "")) for part in parts)
    return str(content or "")


def _gemini_message(content: dict[str, Any]) -> dict[str, Any]:
    """A Gemini `contents` entry as a message: its text parts, or its function responses' output
    as a tool result."""
    parts = [part for part in content.get("parts") or [] if isinstance(part, dict)]
    results = [part["functionResponse"] for part in parts if "functionResponse" in part]
    if results:
        outputs = [result.get("response") or {} for result in results]
        text = "".join(str(output.get("output", output.get("error", ""))) for output in outputs)
        return {"role": "tool", "content": text}
    role = "assistant" if content.get("role") == "model" else "user"
    return {"role": role, "content": "".join(str(part.get("text", "")) for part in parts)}


def _handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            route = self.path.rstrip("/")
            length = int(self.headers.get("Content-Length") or 0)
            try:
                request = json.loads(self.rfile.read(length))
                if route.endswith("/chat/completions") and request.get("stream"):
                    self._send(200, state.chat_stream(request), "text/event-stream")
                elif route.endswith("/chat/completions"):
                    self._send(200, json.dumps(state.chat(request)).encode())
                elif route.split("?")[0].endswith("/messages"):
                    self._send(200, state.messages(request), "text/event-stream")
                elif route.endswith("/responses"):
                    self._send(200, state.responses(request), "text/event-stream")
                elif ":generateContent" in route or ":streamGenerateContent" in route:
                    model, method = route.split("?")[0].rsplit("/", 1)[-1].split(":", 1)
                    stream = method == "streamGenerateContent"
                    kind = "text/event-stream" if stream else "application/json"
                    self._send(200, state.gemini(model, request, stream), kind)
                else:
                    self._send(404, b'{"error": {"message": "no such route"}}')
            except (ValueError, KeyError) as exc:
                message = json.dumps({"error": {"message": f"stand-in: {exc!r}"}})
                self._send(400, message.encode())

        def _send(self, status: int, data: bytes, kind: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
            sys.stderr.write(f"stand-in: {format % args}\n")

    return Handler


def main(argv: list[str]) -> int:
    tls = argv[argv.index("--tls") + 1 : argv.index("--tls") + 3] if "--tls" in argv else []
    scripts = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    state = _State(scripts, Path(argv[1]))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tls[0], tls[1])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    sys.stdout.write(f"{server.server_address[1]}\n")
    sys.stdout.flush()
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
