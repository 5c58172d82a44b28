"""OpenAI Responses over a WebSocket, for the scripted model: what codex tries first.

codex 0.171 opens ``GET /v1/responses`` with ``Upgrade: websocket`` (and ``OpenAI-Beta:
responses_websockets=...``), sends each request as a ``response.create`` message and reads
the response's streaming events back as text messages, the same events as over SSE
(https://platform.openai.com/docs/api-reference/responses-streaming). The credential is the
handshake's ``Authorization``; a bad one is refused before the upgrade, with OpenAI's 401.

The framing is RFC 6455's, by hand (stdlib only, like the rest of the test kit's servers):
client frames are masked, the server's are not; no extension is accepted.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from collections.abc import Callable
from io import BufferedIOBase
from typing import Any

from magi.testing import model_wire as wire
from magi.testing.model_wire import Script

_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455 §1.3
_TEXT, _CLOSE, _PING, _PONG = 0x1, 0x8, 0x9, 0xA


def is_upgrade(method: str, path: str, headers: dict[str, str]) -> bool:
    return (
        method == "GET"
        and path == "/v1/responses"
        and headers.get("upgrade", "").lower() == "websocket"
    )


def accept(key: str) -> str:
    """``Sec-WebSocket-Accept`` for a client's ``Sec-WebSocket-Key``."""
    return base64.b64encode(hashlib.sha1((key + _GUID).encode()).digest()).decode()  # noqa: S324


def read_message(stream: BufferedIOBase) -> tuple[int, bytes] | None:
    """One whole message (continuations joined): (opcode, payload); None at the end."""
    opcode, parts = 0, []
    while True:
        head = stream.read(2)
        if len(head) < 2:
            return None
        first, second = head
        size = second & 0x7F
        if size == 126:
            size = struct.unpack(">H", stream.read(2))[0]
        elif size == 127:
            size = struct.unpack(">Q", stream.read(8))[0]
        mask = stream.read(4) if second & 0x80 else b""
        data = stream.read(size)
        if mask:
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        opcode = opcode or first & 0x0F
        parts.append(data)
        if first & 0x80:
            return opcode, b"".join(parts)


def frame(opcode: int, payload: bytes) -> bytes:
    """A server's (unmasked, final) frame."""
    size = len(payload)
    if size < 126:
        head = struct.pack(">BB", 0x80 | opcode, size)
    elif size < 1 << 16:
        head = struct.pack(">BBH", 0x80 | opcode, 126, size)
    else:
        head = struct.pack(">BBQ", 0x80 | opcode, 127, size)
    return head + payload


def converse(
    rfile: BufferedIOBase,
    wfile: BufferedIOBase,
    script: Script,
    log: Callable[[Any], None],
) -> None:
    """Answer each ``response.create`` until the client closes. A request with no input
    (codex's warm-up) is answered with an empty completed response, not scripted."""
    while (got := read_message(rfile)) is not None:
        opcode, payload = got
        if opcode == _CLOSE:
            wfile.write(frame(_CLOSE, payload[:2]))
            return
        if opcode == _PING:
            wfile.write(frame(_PONG, payload))
            continue
        if opcode != _TEXT:
            continue
        message = json.loads(payload)
        log(message)
        if not isinstance(message, dict) or message.get("type") != "response.create":
            continue
        body = message.get("response") or {k: v for k, v in message.items() if k != "type"}
        asked = wire.openai_asked(body)
        reply = script(asked) if body.get("input") else wire.Reply(input_tokens=0, output_tokens=0)
        for event in wire.openai_events(asked, reply):
            wfile.write(frame(_TEXT, json.dumps(event).encode()))
        wfile.flush()
