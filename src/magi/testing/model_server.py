"""A scripted model server on 127.0.0.1 that the real agent CLIs can be pointed at.

``ScriptedModel(script, keys)`` answers Anthropic Messages, OpenAI Responses and Gemini
``generateContent`` requests (``model_wire``) with what ``script`` says, and logs every
request, so a test asserts what each CLI sent. Its ``url`` is the one base URL each CLI is
pointed at (claude ``ANTHROPIC_BASE_URL``, codex ``openai_base_url=<url>/v1``, gemini
``GOOGLE_GEMINI_BASE_URL``, opencode a provider ``baseURL``).

Credentials are checked as each provider checks them, and a bad one is answered with that
provider's own error body:

* Anthropic: ``x-api-key``, or ``Authorization: Bearer`` (an OAuth or auth token); 401
  ``{"type": "error", "error": {"type": "authentication_error", ...}}``
  (https://docs.anthropic.com/en/api/errors);
* OpenAI: ``Authorization: Bearer``; 401 with ``code: "invalid_api_key"`` for a wrong key
  and a "You didn't provide an API key" message for none
  (https://platform.openai.com/docs/guides/error-codes);
* Gemini: ``x-goog-api-key`` or ``?key=``; Google answers a wrong key with **400**
  ``API_KEY_INVALID`` and none with 403 ``PERMISSION_DENIED``
  (https://ai.google.dev/gemini-api/docs/troubleshooting), so this does too.

A Gemini request for structured output (``responseMimeType: application/json`` and a
schema) is answered with JSON that follows its schema, as the API does, whatever the script
says: the script's text when it is JSON, else the least value the schema allows
(``model_wire.conforming``).

A logged request keeps its headers except the credential's value, which reads
``<accepted>`` or ``<rejected>``.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from magi.testing import model_socket as socket
from magi.testing import model_wire as wire
from magi.testing.model_wire import Provider, Reply, Script

__all__ = ["Logged", "ScriptedModel"]

_CREDENTIAL_HEADERS = ("x-api-key", "authorization", "x-goog-api-key")
_GEMINI_PATH = re.compile(
    r"^/v1(?:beta|alpha)?/models/([^/:]+):(generateContent|streamGenerateContent)$"
)


@dataclass(frozen=True)
class Logged:
    """One request as the server saw it. ``credential``: "accepted", "rejected", "missing"."""

    provider: Provider | None
    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    body: Any
    credential: str
    status: int


@dataclass
class _Answer:
    status: int
    body: Any = None  # JSON
    stream: Iterator[bytes] | None = None  # SSE
    headers: dict[str, str] = field(default_factory=dict)


def _anthropic_key(headers: Mapping[str, str]) -> tuple[str | None, str]:
    if "x-api-key" in headers:
        return headers["x-api-key"], "x-api-key"
    auth = headers.get("authorization", "")
    return (auth[7:], "authorization") if auth.lower().startswith("bearer ") else (None, "")


def _bearer(headers: Mapping[str, str]) -> tuple[str | None, str]:
    auth = headers.get("authorization", "")
    return (auth[7:], "authorization") if auth.lower().startswith("bearer ") else (None, "")


def _refusal(provider: Provider, given: str | None) -> _Answer:
    if provider == "anthropic":
        error: dict[str, Any] = {"type": "authentication_error", "message": "invalid x-api-key"}
        return _Answer(401, {"type": "error", "error": error, "request_id": "req_scripted"})
    if provider == "openai":
        if given is None:
            message = (
                "You didn't provide an API key. You need to provide your API key in an "
                "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
            )
            return _Answer(
                401,
                {
                    "error": {
                        "message": message,
                        "type": "invalid_request_error",
                        "param": None,
                        "code": None,
                    }
                },
            )
        shown = given[:3] + "*" * max(0, len(given) - 7) + given[-4:] if len(given) > 8 else "***"
        message = (
            f"Incorrect API key provided: {shown}. You can find your API key at "
            "https://platform.openai.com/account/api-keys."
        )
        error = {
            "message": message,
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
        return _Answer(401, {"error": error})
    if given is None:
        message = (
            "Method doesn't allow unregistered callers (callers without established identity)."
            " Please use API Key or other form of API consumer identity to call this API."
        )
        return _Answer(
            403, {"error": {"code": 403, "message": message, "status": "PERMISSION_DENIED"}}
        )
    detail = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "API_KEY_INVALID",
        "domain": "googleapis.com",
        "metadata": {"service": "generativelanguage.googleapis.com"},
    }
    message = "API key not valid. Please pass a valid API key."
    error = {
        "code": 400,
        "message": message,
        "status": "INVALID_ARGUMENT",
        "details": [detail],
    }
    return _Answer(400, {"error": error})


class ScriptedModel:
    """The server; a context manager. ``keys``: the one key each provider accepts."""

    def __init__(self, script: Script, keys: Mapping[Provider, str]) -> None:
        self.script = script
        self.keys = dict(keys)
        self.requests: list[Logged] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def logged(self, provider: Provider | None = None) -> list[Logged]:
        with self._lock:
            return [r for r in self.requests if provider is None or r.provider == provider]

    def _log(self, entry: Logged) -> None:
        with self._lock:
            self.requests.append(entry)

    def answer(
        self,
        method: str,
        path: str,
        query: Mapping[str, list[str]],
        headers: Mapping[str, str],
        body: Any,
    ) -> tuple[Provider | None, str, _Answer]:
        """The provider a request is for, its credential's verdict, and the answer."""
        if method == "HEAD":
            return None, "missing", _Answer(200)
        provider, given, model, stream = self._route(method, path, query, headers, body)
        if provider is None:
            return (
                None,
                "missing",
                _Answer(404, {"error": {"message": f"no route {method} {path}"}}),
            )
        if given is None or given != self.keys.get(provider):
            verdict = "missing" if given is None else "rejected"
            return provider, verdict, _refusal(provider, given)
        if not isinstance(body, dict):
            return (
                provider,
                "accepted",
                _Answer(400, {"error": {"message": "the body is not a JSON object"}}),
            )
        return provider, "accepted", self._scripted(provider, model, stream, query, body)

    def _route(
        self,
        method: str,
        path: str,
        query: Mapping[str, list[str]],
        headers: Mapping[str, str],
        body: Any,
    ) -> tuple[Provider | None, str | None, str, bool]:
        data = body if isinstance(body, dict) else {}
        if method == "POST" and path == "/v1/messages":
            return "anthropic", _anthropic_key(headers)[0], "", bool(data.get("stream"))
        if method == "POST" and path == "/v1/responses":
            return "openai", _bearer(headers)[0], "", bool(data.get("stream"))
        found = _GEMINI_PATH.match(path)
        if method == "POST" and found:
            key = headers.get("x-goog-api-key") or next(iter(query.get("key") or []), None)
            return "gemini", key, found.group(1), found.group(2) == "streamGenerateContent"
        return None, None, "", False

    def _scripted(
        self,
        provider: Provider,
        model: str,
        stream: bool,
        query: Mapping[str, list[str]],
        body: dict[str, Any],
    ) -> _Answer:
        if provider == "anthropic":
            asked = wire.anthropic_asked(body)
            reply = self.script(asked)
            if stream:
                return _Answer(200, stream=wire.anthropic_stream(asked, reply))
            return _Answer(200, wire.anthropic_message(asked, reply))
        if provider == "openai":
            asked = wire.openai_asked(body)
            reply = self.script(asked)
            if stream:
                return _Answer(200, stream=wire.openai_stream(asked, reply))
            return _Answer(200, wire.openai_response(asked, reply))
        asked = wire.gemini_asked(model, stream, body)
        reply = self.script(asked)
        if asked.schema is not None and not _is_json(reply.text):
            # Structured output: the API answers JSON that follows the schema, never a call.
            reply = Reply(
                text=json.dumps(wire.conforming(asked.schema)),
                input_tokens=reply.input_tokens,
                output_tokens=reply.output_tokens,
            )
        if not stream:
            return _Answer(200, wire.gemini_response(asked, reply))
        if (query.get("alt") or [""])[0] == "sse":
            return _Answer(200, stream=wire.gemini_stream(asked, reply))
        return _Answer(200, [wire.gemini_response(asked, reply)])


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _shown_headers(headers: Mapping[str, str], verdict: str) -> dict[str, str]:
    word = "<accepted>" if verdict == "accepted" else "<rejected>"
    return {k: (word if k in _CREDENTIAL_HEADERS else v) for k, v in headers.items()}


def _handler(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return  # the requests are logged on the model, not on stderr

        def _serve(self) -> None:
            split = urlsplit(self.path)
            query = parse_qs(split.query)
            headers = {k.lower(): v for k, v in self.headers.items()}
            if socket.is_upgrade(self.command, split.path, headers):
                self._socket(split.path, headers)
                return
            size = int(headers.get("content-length") or 0)
            raw = self.rfile.read(size) if size else b""
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            provider, verdict, answer = model.answer(self.command, split.path, query, headers, body)
            shown_query = {k: (["<key>"] if k == "key" else v) for k, v in query.items()}
            model._log(
                Logged(
                    provider,
                    self.command,
                    split.path,
                    shown_query,
                    _shown_headers(headers, verdict),
                    body,
                    verdict,
                    answer.status,
                )
            )
            self._send(answer)

        def _socket(self, path: str, headers: dict[str, str]) -> None:
            """The Responses API over a WebSocket (``model_socket``): the handshake's
            credential checked first, then one logged entry per message."""
            given = _bearer(headers)[0]
            ok = given is not None and given == model.keys.get("openai")
            verdict = "accepted" if ok else "missing" if given is None else "rejected"
            status = 101 if ok else 401
            shown = _shown_headers(headers, verdict)
            model._log(Logged("openai", "GET", path, {}, shown, None, verdict, status))
            if not ok:
                self._send(_refusal("openai", given))
                return
            self.send_response(101)
            self.send_header("Upgrade", "websocket")
            self.send_header("Connection", "Upgrade")
            self.send_header("Sec-WebSocket-Accept", socket.accept(headers["sec-websocket-key"]))
            self.end_headers()
            self.wfile.flush()

            def log(message: Any) -> None:
                model._log(Logged("openai", "WS", path, {}, shown, message, verdict, 200))

            socket.converse(self.rfile, self.wfile, model.script, log)
            self.close_connection = True

        def _send(self, answer: _Answer) -> None:
            self.send_response(answer.status)
            for k, v in answer.headers.items():
                self.send_header(k, v)
            self.send_header("Connection", "close")
            if answer.stream is not None:
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for chunk in answer.stream:
                    self.wfile.write(chunk)
                    self.wfile.flush()
            else:
                data = b"" if answer.body is None else json.dumps(answer.body).encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
            self.close_connection = True

        do_GET = do_POST = do_HEAD = _serve

    return Handler
