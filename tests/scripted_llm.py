"""A scripted OpenAI-compatible chat server on loopback: the only mock in the suite, behind a real socket.

Each POST to /v1/chat/completions is recorded and answered by the next step of the script. A step
is a function `(request_json) -> Reply`; helpers build the common ones. The real `openai` SDK talks
to it over HTTP, retries included.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = Callable[[dict], "Reply"]


@dataclass
class Reply:
    status: int = 200
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hold: threading.Event | None = None  # block until set (a model that never answers)


def _completion(message: dict[str, Any], prompt_tokens: int = 100, cached: int = 0) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "scripted-model",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 20,
            "total_tokens": prompt_tokens + 20,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def text(content: str, **kw) -> Step:
    return lambda request: Reply(body=_completion({"role": "assistant", "content": content}), **kw)


def consent(yes: bool = True, reason: str = "fine") -> Step:
    return text(json.dumps({"consent": yes, "reason": reason}))


def tools(*calls: tuple[str, Any], **kw) -> Step:
    """One assistant message with these tool calls; arguments may be a dict or a raw string."""

    def step(request: dict) -> Reply:
        tool_calls = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for i, (name, args) in enumerate(calls)
        ]
        return Reply(body=_completion({"role": "assistant", "content": None, "tool_calls": tool_calls}), **kw)

    return step


def complete(summary: str = "No duplicates; zero operations") -> Step:
    return tools(("complete_refinement", {"summary": summary}))


def error(status: int) -> Step:
    return lambda request: Reply(
        status=status,
        body={"error": {"message": f"scripted {status}", "type": "scripted", "code": status}},
        headers={"retry-after-ms": "10"},
    )


class ScriptedLLM:
    """The server. `script` is consumed step by step; once empty, `fallback` answers."""

    def __init__(self) -> None:
        self.script: list[Step] = []
        self.fallback: Step = text("I have nothing more to do.")
        self.requests: list[dict] = []
        self.raw_requests: list[bytes] = []  # the request bodies byte for byte, as the SDK sent them
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                request = json.loads(raw or b"{}")
                with server._lock:
                    server.requests.append(request)
                    server.raw_requests.append(raw)
                    step = server.script.pop(0) if server.script else server.fallback
                reply = step(request)
                if reply.hold is not None:
                    reply.hold.wait(timeout=60)
                if reply.delay:
                    time.sleep(reply.delay)
                payload = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> ScriptedLLM:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def tool_requests(self) -> list[dict]:
        return [r for r in self.requests if r.get("tools")]
