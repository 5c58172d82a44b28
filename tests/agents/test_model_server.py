"""The scripted model: each provider's wire format, its credential check and 401 body, and
the log of what was sent. Clients here are plain HTTP, as the CLIs' own are."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from magi.testing.model_server import ScriptedModel
from magi.testing.model_wire import Asked, Reply, ToolCall

KEYS = {"anthropic": "sk-ant-good", "openai": "sk-openai-good-123456", "gemini": "AIza-good"}


def script(asked: Asked) -> Reply:
    """Runs a tool first, then says what the tool returned (the shape of an agent's turn)."""
    role, text = asked.last
    if role == "tool":
        return Reply(text=f"done: {text}", input_tokens=40, output_tokens=7)
    if "freeform" in asked.last_user:
        return Reply(tool_calls=(ToolCall("apply_patch", "*** Begin Patch"),))
    return Reply(text="running it", tool_calls=(ToolCall("Bash", {"command": "git commit"}),))


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel(script, KEYS) as m:
        yield m


def sse(text: str) -> list[tuple[str | None, dict]]:
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        lines = block.strip().splitlines()
        if not lines:
            continue
        event = next((ln[7:] for ln in lines if ln.startswith("event: ")), None)
        data = next(ln[6:] for ln in lines if ln.startswith("data: "))
        out.append((event, json.loads(data)))
    return out


def test_anthropic_messages_json_and_sse_with_a_tool_call(model: ScriptedModel) -> None:
    body = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "go"}]}
    headers = {"x-api-key": KEYS["anthropic"], "x-claude-code-session-id": "s-1"}
    got = httpx.post(f"{model.url}/v1/messages?beta=true", json=body, headers=headers).json()
    assert got["stop_reason"] == "tool_use"
    assert [b["type"] for b in got["content"]] == ["text", "tool_use"]
    assert got["content"][1]["input"] == {"command": "git commit"}
    streamed = httpx.post(
        f"{model.url}/v1/messages", json={**body, "stream": True}, headers=headers
    )
    events = sse(streamed.text)
    assert [e for e, _ in events] == [
        "message_start",
        *["content_block_start", "content_block_delta", "content_block_stop"] * 2,
        "message_delta",
        "message_stop",
    ]
    partial = events[5][1]["delta"]
    assert partial["type"] == "input_json_delta"
    assert json.loads(partial["partial_json"]) == {"command": "git commit"}
    # The tool's result comes back as a user message's tool_result block.
    result = {
        "type": "tool_result",
        "tool_use_id": "t",
        "content": [{"type": "text", "text": "ok"}],
    }
    body["messages"] += [{"role": "user", "content": [result]}]
    again = httpx.post(f"{model.url}/v1/messages", json=body, headers=headers).json()
    assert again["content"] == [{"type": "text", "text": "done: ok"}]
    assert again["usage"]["input_tokens"] == 40
    logged = model.logged("anthropic")
    assert len(logged) == 3
    assert logged[0].headers["x-claude-code-session-id"] == "s-1"
    assert logged[0].headers["x-api-key"] == "<accepted>"
    assert logged[0].query == {"beta": ["true"]}


def test_anthropic_refuses_a_bad_key_with_its_own_body_and_takes_a_bearer_token(
    model: ScriptedModel,
) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "go"}]}
    bad = httpx.post(f"{model.url}/v1/messages", json=body, headers={"x-api-key": "sk-ant-bad"})
    assert bad.status_code == 401
    assert bad.json()["error"] == {"type": "authentication_error", "message": "invalid x-api-key"}
    assert bad.json()["type"] == "error"
    bearer = {"authorization": f"Bearer {KEYS['anthropic']}"}
    assert httpx.post(f"{model.url}/v1/messages", json=body, headers=bearer).status_code == 200
    verdicts = [(r.credential, r.status) for r in model.logged("anthropic")]
    assert verdicts == [("rejected", 401), ("accepted", 200)]
    assert "sk-ant-bad" not in json.dumps([r.headers for r in model.logged()])


def test_openai_responses_stream_function_and_freeform_calls(model: ScriptedModel) -> None:
    auth = {"authorization": f"Bearer {KEYS['openai']}"}
    body = {"model": "gpt-x", "stream": True, "instructions": "be brief", "input": "go"}
    events = [
        d for _, d in sse(httpx.post(f"{model.url}/v1/responses", json=body, headers=auth).text)
    ]
    assert events[0]["type"] == "response.created"
    assert events[-1]["type"] == "response.completed"
    done = events[-1]["response"]
    assert [i["type"] for i in done["output"]] == ["message", "function_call"]
    assert json.loads(done["output"][1]["arguments"]) == {"command": "git commit"}
    assert done["usage"]["total_tokens"] == 15
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    freeform = {
        **body,
        "stream": False,
        "input": [
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "freeform"}],
            }
        ],
    }
    got = httpx.post(f"{model.url}/v1/responses", json=freeform, headers=auth).json()
    assert got["output"][0]["type"] == "custom_tool_call"
    assert got["output"][0]["input"] == "*** Begin Patch"
    output = {"type": "function_call_output", "call_id": "c", "output": "exit 0"}
    tool_turn = {**body, "stream": False, "input": [*freeform["input"], output]}
    answer = httpx.post(f"{model.url}/v1/responses", json=tool_turn, headers=auth).json()
    assert answer["output"][0]["content"][0]["text"] == "done: exit 0"


def test_openai_refuses_a_missing_or_wrong_key_as_openai_does(model: ScriptedModel) -> None:
    body = {"model": "gpt-x", "input": "go"}
    none = httpx.post(f"{model.url}/v1/responses", json=body)
    assert none.status_code == 401
    assert "You didn't provide an API key" in none.json()["error"]["message"]
    wrong = httpx.post(
        f"{model.url}/v1/responses",
        json=body,
        headers={"authorization": "Bearer sk-wrong-key-0000"},
    )
    assert wrong.status_code == 401
    assert wrong.json()["error"]["code"] == "invalid_api_key"
    assert "sk-wrong-key" not in wrong.json()["error"]["message"]
    assert [r.credential for r in model.logged("openai")] == ["missing", "rejected"]


def test_gemini_generate_and_stream_with_header_or_query_key(model: ScriptedModel) -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "go"}]}],
        "tools": [{"functionDeclarations": [{"name": "run_shell_command"}]}],
    }
    base = f"{model.url}/v1beta/models/gemini-x"
    got = httpx.post(
        f"{base}:generateContent", json=body, headers={"x-goog-api-key": KEYS["gemini"]}
    ).json()
    parts = got["candidates"][0]["content"]["parts"]
    assert parts[1] == {"functionCall": {"name": "Bash", "args": {"command": "git commit"}}}
    assert got["usageMetadata"]["totalTokenCount"] == 15
    streamed = httpx.post(f"{base}:streamGenerateContent?alt=sse&key={KEYS['gemini']}", json=body)
    chunks = sse(streamed.text)
    assert chunks[-1][1]["candidates"][0]["finishReason"] == "STOP"
    back = {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "run_shell_command", "response": {"output": "ok"}}}
        ],
    }
    body["contents"].append(back)
    said = httpx.post(
        f"{base}:generateContent", json=body, headers={"x-goog-api-key": KEYS["gemini"]}
    ).json()
    assert said["candidates"][0]["content"]["parts"][0]["text"] == 'done: {"output": "ok"}'
    logged = model.logged("gemini")
    assert logged[1].query["key"] == ["<key>"]
    assert logged[0].body["tools"][0]["functionDeclarations"][0]["name"] == "run_shell_command"


# gemini-cli 0.61.0's model router, as it asked (no ``-m``): a classifier call for JSON.
ROUTER_SCHEMA = {
    "type": "OBJECT",
    "properties": {
        "complexity_reasoning": {"type": "STRING"},
        "complexity_score": {"type": "INTEGER"},
        "mode": {"type": "STRING", "enum": ["fast", "slow"]},
        "steps": {"type": "ARRAY", "items": {"type": "NUMBER"}, "minItems": 1},
    },
    "required": ["complexity_reasoning", "complexity_score"],
}


def test_gemini_structured_output_follows_its_schema_whatever_the_script_says(
    model: ScriptedModel,
) -> None:
    """The script answers a tool call; the API's structured output answers JSON of the schema
    (gemini's router retried the call five times, ~100 s, before this)."""
    body = {
        "contents": [{"role": "user", "parts": [{"text": "go"}]}],
        "generationConfig": {
            "responseMimeType": "application/json",
            "responseJsonSchema": ROUTER_SCHEMA,
        },
    }
    url = f"{model.url}/v1beta/models/gemini-3.5-flash-lite:generateContent"
    got = httpx.post(url, json=body, headers={"x-goog-api-key": KEYS["gemini"]}).json()
    parts = got["candidates"][0]["content"]["parts"]
    assert [list(p) for p in parts] == [["text"]]
    assert json.loads(parts[0]["text"]) == {
        "complexity_reasoning": "scripted",
        "complexity_score": 1,
        "mode": "fast",
        "steps": [1],
    }
    key = {"x-goog-api-key": KEYS["gemini"]}
    plain = httpx.post(url, json={"contents": body["contents"]}, headers=key).json()
    assert "functionCall" in plain["candidates"][0]["content"]["parts"][1]  # no schema: the script


def test_gemini_refuses_as_google_does(model: ScriptedModel) -> None:
    url = f"{model.url}/v1beta/models/gemini-x:generateContent"
    body = {"contents": [{"role": "user", "parts": [{"text": "go"}]}]}
    wrong = httpx.post(url, json=body, headers={"x-goog-api-key": "AIza-bad"})
    assert wrong.status_code == 400
    assert wrong.json()["error"]["details"][0]["reason"] == "API_KEY_INVALID"
    none = httpx.post(url, json=body)
    assert (none.status_code, none.json()["error"]["status"]) == (403, "PERMISSION_DENIED")


def test_claudes_probe_and_unknown_routes(model: ScriptedModel) -> None:
    assert httpx.head(f"{model.url}/").status_code == 200  # claude's HEAD / before a turn
    assert httpx.get(f"{model.url}/v1/responses").status_code == 404  # no WebSocket here
    assert [(r.method, r.path, r.status) for r in model.logged()] == [
        ("HEAD", "/", 200),
        ("GET", "/v1/responses", 404),
    ]


def _ws_client(model: ScriptedModel, key: str | None) -> tuple[object, bytes]:
    """A minimal RFC 6455 client: the handshake's answer, and the socket for frames."""
    import base64
    import os
    import socket

    host, port = model.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    nonce = base64.b64encode(os.urandom(16)).decode()
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    sock.sendall(
        (
            f"GET /v1/responses HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {nonce}\r\nSec-WebSocket-Version: 13\r\n"
            f"OpenAI-Beta: responses_websockets=2026-02-06\r\n{auth}\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    return sock, head


def test_openai_responses_over_a_websocket_as_codex_opens_it(model: ScriptedModel) -> None:
    """codex's first transport: the handshake's key checked, then each response.create
    message answered with the streaming events as text frames (masked client frames)."""
    import os
    import struct

    from magi.testing import model_socket

    refused, head = _ws_client(model, "sk-wrong-key-0000")
    assert head.startswith(b"HTTP/1.1 401")
    refused.close()  # type: ignore[attr-defined]
    sock, head = _ws_client(model, KEYS["openai"])
    assert head.startswith(b"HTTP/1.1 101")
    message = {"type": "response.create", "model": "gpt-x", "input": "go"}
    payload = json.dumps(message).encode()
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    sock.sendall(struct.pack(">BBH", 0x81, 0x80 | 126, len(payload)) + mask + masked)  # type: ignore[attr-defined]
    stream = sock.makefile("rb")  # type: ignore[attr-defined]
    events = []
    while not events or events[-1]["type"] != "response.completed":
        got = model_socket.read_message(stream)
        assert got is not None
        events.append(json.loads(got[1]))
    done = events[-1]["response"]
    assert [i["type"] for i in done["output"]] == ["message", "function_call"]
    sock.close()  # type: ignore[attr-defined]
    assert [(r.method, r.status, r.credential) for r in model.logged("openai")] == [
        ("GET", 401, "rejected"),
        ("GET", 101, "accepted"),
        ("WS", 200, "accepted"),
    ]
    assert model.logged("openai")[-1].body == message
