"""Reading a CLI's JSON output through pydantic event models, forgiving field by field.

Each adapter declares the events its CLI prints as models built on `Event`
(``extra="ignore"``: a CLI that adds fields breaks nothing). Their fields use the lenient
types below, so one field of the wrong type reads as missing instead of throwing the whole
event away: a ``thread_id`` that is a number is no thread id, and the event's other fields
still count. The types are strict otherwise: ``"3"`` is no token count, ``true`` no integer.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)


def _or_none(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    try:
        return handler(value)
    except ValidationError:
        return None


Lenient = WrapValidator(_or_none)
Int = Annotated[StrictInt | None, Lenient]
Num = Annotated[StrictInt | StrictFloat | None, Lenient]
Str = Annotated[StrictStr | None, Lenient]
Flag = Annotated[bool | None, Lenient]


class Event(BaseModel):
    """Base of every CLI event model: unknown fields ignored, the model read-only."""

    model_config = ConfigDict(extra="ignore", frozen=True)


E = TypeVar("E", bound=Event)


def _valid(model: type[E], obj: object) -> E | None:
    try:
        return model.model_validate(obj)
    except ValidationError:
        return None


def json_lines(stdout: str) -> list[dict[str, Any]]:
    """Every line of ``stdout`` that is a JSON object; other lines (banners, logs) are skipped."""
    events = []
    for line in stdout.splitlines():
        obj = json_line(line)
        if obj is not None:
            events.append(obj)
    return events


def json_line(line: str) -> dict[str, Any] | None:
    """``line`` as a JSON object, or None when it is not one."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (which may be pretty-printed, after other lines)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            return obj
        start = text.find("{", start + 1)
    return None


def events(stdout: str, model: type[E]) -> list[E]:
    """The JSONL events on ``stdout`` as ``model``; lines that are not objects are skipped."""
    found = (_valid(model, obj) for obj in json_lines(stdout))
    return [e for e in found if e is not None]


def event(line: str, model: type[E]) -> E | None:
    """One output line as ``model``, or None when it is not such an event."""
    obj = json_line(line)
    return None if obj is None else _valid(model, obj)


def document(text: str, model: type[E]) -> E | None:
    """The first JSON object in ``text`` as ``model`` (None: there is none)."""
    obj = json_object(text)
    return None if obj is None else _valid(model, obj)
