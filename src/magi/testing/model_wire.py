"""The wire formats of the scripted model (``model_server``): each provider's request read
into one `Asked`, and a scripted `Reply` written back as that provider writes it.

Enough of each API for the agent CLIs to run a turn with tool calls (README §5 of
/work/shared/agents says what each CLI sent):

* Anthropic Messages, ``POST /v1/messages``, JSON or SSE (``stream: true``):
  https://docs.anthropic.com/en/api/messages, https://docs.anthropic.com/en/api/messages-streaming;
* OpenAI Responses, ``POST /v1/responses``, JSON or SSE:
  https://platform.openai.com/docs/api-reference/responses,
  https://platform.openai.com/docs/api-reference/responses-streaming;
* Gemini ``POST /v1beta/models/<model>:generateContent`` and ``:streamGenerateContent``
  (``?alt=sse``, else one JSON array): https://ai.google.dev/api/generate-content.

A tool call whose ``arguments`` is a string is OpenAI's freeform (``custom_tool_call``);
elsewhere arguments are an object.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Provider = Literal["anthropic", "openai", "gemini"]


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    """What the scripted model answers: text, tool calls, or both (text first)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    input_tokens: int = 10
    output_tokens: int = 5


@dataclass(frozen=True)
class Asked:
    """One request to the model, as a script reads it. ``turns`` are (role, text) in order:
    roles ``system``, ``user``, ``assistant``, and ``tool`` for a tool's result."""

    provider: Provider
    model: str
    stream: bool
    turns: tuple[tuple[str, str], ...]
    tools: tuple[str, ...]
    body: Mapping[str, Any]
    # The JSON schema the answer must follow, when the request asks for structured output.
    schema: Mapping[str, Any] | None = None

    @property
    def last_user(self) -> str:
        return next((t for r, t in reversed(self.turns) if r == "user"), "")

    @property
    def last(self) -> tuple[str, str]:
        """The newest turn that is not the system's: ``("tool", output)`` after a tool ran."""
        return next(((r, t) for r, t in reversed(self.turns) if r != "system"), ("", ""))


Script = Callable[[Asked], Reply]


def _texts(content: Any) -> str:
    """The text of a content value: a string, or a list of blocks with ``text``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _texts(b.get("text", b.get("content", ""))) for b in content if isinstance(b, dict)
        )
    return ""


def _id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


def _sse(event: str | None, data: Mapping[str, Any]) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


# -- Anthropic Messages -------------------------------------------------------------------


def anthropic_asked(body: Mapping[str, Any]) -> Asked:
    turns: list[tuple[str, str]] = []
    if body.get("system"):
        turns.append(("system", _texts(body["system"])))
    for m in body.get("messages") or []:
        content = m.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for b in blocks:
            kind = b.get("type")
            if kind == "text":
                turns.append((m.get("role", "user"), str(b.get("text", ""))))
            elif kind == "tool_result":
                turns.append(("tool", _texts(b.get("content", ""))))
            elif kind == "tool_use":
                turns.append(("assistant", f"[{b.get('name')}] {json.dumps(b.get('input'))}"))
    tools = tuple(str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict))
    model = str(body.get("model", ""))
    return Asked("anthropic", model, bool(body.get("stream")), tuple(turns), tools, body)


def _anthropic_blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    for call in reply.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": _id("toolu"), "name": call.name, "input": call.arguments}
        )
    return blocks


def anthropic_message(asked: Asked, reply: Reply) -> dict[str, Any]:
    return {
        "id": _id("msg"),
        "type": "message",
        "role": "assistant",
        "model": asked.model,
        "content": _anthropic_blocks(reply),
        "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": reply.input_tokens,
            "output_tokens": reply.output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def anthropic_stream(asked: Asked, reply: Reply) -> Iterator[bytes]:
    message = anthropic_message(asked, reply)
    start = {**message, "content": [], "stop_reason": None}
    start["usage"] = {**message["usage"], "output_tokens": 1}
    yield _sse("message_start", {"type": "message_start", "message": start})
    for i, block in enumerate(message["content"]):
        opened: dict[str, Any]
        delta: dict[str, Any]
        if block["type"] == "text":
            opened, delta = (
                {"type": "text", "text": ""},
                {"type": "text_delta", "text": block["text"]},
            )
        else:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": i, "content_block": opened},
        )
        yield _sse(
            "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        )
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": i})
    ended = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    usage = {"output_tokens": reply.output_tokens}
    yield _sse("message_delta", {"type": "message_delta", "delta": ended, "usage": usage})
    yield _sse("message_stop", {"type": "message_stop"})


# -- OpenAI Responses ---------------------------------------------------------------------


def _openai_item_turns(item: Any) -> list[tuple[str, str]]:
    if isinstance(item, str):
        return [("user", item)]
    if not isinstance(item, dict):
        return []
    kind = item.get("type", "message")
    if kind == "message":
        role = item.get("role", "user")
        return [("system" if role == "developer" else role, _texts(item.get("content", "")))]
    if kind in ("function_call_output", "custom_tool_call_output"):
        out = item.get("output", "")
        return [("tool", out if isinstance(out, str) else _texts(out))]
    if kind in ("function_call", "custom_tool_call"):
        args = item.get("arguments", item.get("input", ""))
        return [("assistant", f"[{item.get('name')}] {args}")]
    return []


def _openai_tool_names(body: Mapping[str, Any]) -> tuple[str, ...]:
    names: list[str] = []
    offered = list(body.get("tools") or [])
    for item in body.get("input") or []:  # codex offers some tools in an input item
        if isinstance(item, dict) and isinstance(item.get("tools"), list):
            offered += item["tools"]
    for t in offered:
        if isinstance(t, dict):
            names.append(str(t.get("name") or t.get("type")))
    return tuple(names)


def openai_asked(body: Mapping[str, Any]) -> Asked:
    turns: list[tuple[str, str]] = []
    if body.get("instructions"):
        turns.append(("system", str(body["instructions"])))
    given = body.get("input")
    for item in [given] if isinstance(given, str) else given or []:
        turns += _openai_item_turns(item)
    model = str(body.get("model", ""))
    return Asked(
        "openai", model, bool(body.get("stream")), tuple(turns), _openai_tool_names(body), body
    )


def _openai_items(reply: Reply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.text:
        part = {"type": "output_text", "text": reply.text, "annotations": []}
        items.append(
            {
                "type": "message",
                "id": _id("msg"),
                "status": "completed",
                "role": "assistant",
                "content": [part],
            }
        )
    for call in reply.tool_calls:
        common = {"id": _id("fc"), "call_id": _id("call"), "name": call.name, "status": "completed"}
        if isinstance(call.arguments, str):
            items.append({"type": "custom_tool_call", **common, "input": call.arguments})
        else:
            items.append(
                {"type": "function_call", **common, "arguments": json.dumps(call.arguments)}
            )
    return items


def openai_response(
    asked: Asked, reply: Reply, *, response_id: str | None = None
) -> dict[str, Any]:
    return {
        "id": response_id or _id("resp"),
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": asked.model,
        "output": _openai_items(reply),
        "usage": {
            "input_tokens": reply.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": reply.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": reply.input_tokens + reply.output_tokens,
        },
    }


def openai_events(asked: Asked, reply: Reply) -> Iterator[dict[str, Any]]:
    """The streaming events of one response, in order (SSE or a WebSocket's messages)."""
    done = openai_response(asked, reply)
    yield {"type": "response.created", "response": {**done, "status": "in_progress", "output": []}}
    for i, item in enumerate(done["output"]):
        opened = {**item, "status": "in_progress"}
        if item["type"] == "message":
            opened["content"] = []
        yield {"type": "response.output_item.added", "output_index": i, "item": opened}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            where = {"item_id": item["id"], "output_index": i, "content_index": 0}
            yield {
                "type": "response.content_part.added",
                **where,
                "part": {**item["content"][0], "text": ""},
            }
            yield {"type": "response.output_text.delta", **where, "delta": text}
            yield {"type": "response.output_text.done", **where, "text": text}
            yield {"type": "response.content_part.done", **where, "part": item["content"][0]}
        elif item["type"] == "function_call":
            where = {"item_id": item["id"], "output_index": i}
            yield {
                "type": "response.function_call_arguments.delta",
                **where,
                "delta": item["arguments"],
            }
            yield {
                "type": "response.function_call_arguments.done",
                **where,
                "arguments": item["arguments"],
            }
        yield {"type": "response.output_item.done", "output_index": i, "item": item}
    yield {"type": "response.completed", "response": done}


def openai_stream(asked: Asked, reply: Reply) -> Iterator[bytes]:
    for n, ev in enumerate(openai_events(asked, reply)):
        yield _sse(ev["type"], {**ev, "sequence_number": n})


# -- Gemini -------------------------------------------------------------------------------


def gemini_asked(model: str, stream: bool, body: Mapping[str, Any]) -> Asked:
    turns: list[tuple[str, str]] = []
    system = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(system, dict):
        turns.append(("system", _texts(system.get("parts", []))))
    for c in body.get("contents") or []:
        role = "assistant" if c.get("role") == "model" else "user"
        for p in c.get("parts") or []:
            if "text" in p:
                turns.append((role, str(p["text"])))
            elif "functionResponse" in p:
                turns.append(("tool", json.dumps(p["functionResponse"].get("response"))))
            elif "functionCall" in p:
                call = p["functionCall"]
                turns.append(("assistant", f"[{call.get('name')}] {json.dumps(call.get('args'))}"))
    tools = tuple(
        str(d.get("name"))
        for t in body.get("tools") or []
        for d in (t.get("functionDeclarations") or t.get("function_declarations") or [])
    )
    config = body.get("generationConfig") or body.get("generation_config") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    structured = config.get("responseMimeType") == "application/json" and isinstance(schema, dict)
    return Asked("gemini", model, stream, tuple(turns), tools, body, schema if structured else None)


def conforming(schema: Mapping[str, Any]) -> Any:
    """The least value ``schema`` allows. Gemini's structured output (``responseMimeType``
    ``application/json`` with ``responseSchema`` or ``responseJsonSchema``) answers only
    JSON that follows the schema, whatever the model would say
    (https://ai.google.dev/gemini-api/docs/structured-output): gemini-cli's model router,
    for one, retries with backoff an answer that does not parse (five tries, ~100 s)."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type", "object")
    kind = str(kind[0] if isinstance(kind, list) else kind).lower()  # Gemini's are upper case
    if kind == "object":
        return {k: conforming(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [conforming(schema.get("items") or {}) for _ in range(schema.get("minItems", 0))]
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    return "scripted" if kind == "string" else None


def gemini_response(asked: Asked, reply: Reply, *, finished: bool = True) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text else []
    parts += [{"functionCall": {"name": c.name, "args": c.arguments}} for c in reply.tool_calls]
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finished:
        candidate["finishReason"] = "STOP"
    return {
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": reply.input_tokens,
            "candidatesTokenCount": reply.output_tokens,
            "totalTokenCount": reply.input_tokens + reply.output_tokens,
        },
        "modelVersion": asked.model,
        "responseId": _id("resp"),
    }


def gemini_stream(asked: Asked, reply: Reply) -> Iterator[bytes]:
    """``?alt=sse``: data-only events, the last one carrying the finish reason."""
    yield f"data: {json.dumps(gemini_response(asked, reply))}\r\n\r\n".encode()
