"""Config loading: find the layers, render and parse each file, merge, and validate.

Layers, lowest precedence first::

    <user config dir>/config.toml  <  <repo>/.magi/config.toml  <  <repo>/magi.toml

(``<user config dir>`` is ``platformdirs.user_config_dir("magi")``, or ``$MAGI_CONFIG_DIR``.)
Missing files are skipped; ``config_path`` replaces all three with one file. A file's
``include = [...]`` names files (relative to it) that merge just below it, recursively.

Each file is rendered twice (see ``config.template`` for the single-quote trap): once with
unknown ``vars.*`` tolerated, only to read its ``[vars]``, then for real with ``vars`` bound
to the vars of every layer below it plus its own, so a var may be built from ``env`` and a
higher layer may use a lower layer's vars. An included file sees the vars its includer saw.

Every problem found in any file is collected and raised as one ``ConfigError``, one problem
a line, because ``magi doctor`` should show all of them at once rather than one per run.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import BaseModel, ValidationError

from magi.config import template
from magi.config.merge import dotted, merge_layers, merge_plain, source_for
from magi.errors import ConfigError
from magi.model.config import BUILTIN_KINDS, NOT_IMPLEMENTED, Config, unimplemented_keys

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
_TOML_AT = re.compile(r"\s*\(at line (\d+), column \d+\)$")


@dataclass(frozen=True)
class ResolvedConfig:
    """The validated config, the files read (in merge order) and where each value came from."""

    config: Config
    files: list[Path] = field(default_factory=list)
    sources: dict[str, Path] = field(default_factory=dict)

    def provenance(self, key: str) -> str:
        """The file that set ``key`` (or its enclosing array), or ``"default"``."""
        parts = [p for p in re.split(r"\.|\[(\d+)\]", key) if p]
        path = source_for([int(p) if p.isdigit() else p for p in parts], self.sources)
        return str(path) if path is not None else "default"


@dataclass(frozen=True)
class _Problem:
    message: str
    path: Path | None = None
    line: int | None = None
    key: str | None = None

    def error(self) -> ConfigError:
        return ConfigError(self.message, path=self.path, line=self.line, key=self.key)


def machine_config_dir(environ: Mapping[str, str]) -> Path:
    """The directory holding the machine's ``config.toml`` (``$MAGI_CONFIG_DIR`` wins)."""
    override = environ.get("MAGI_CONFIG_DIR")
    return Path(override) if override else Path(platformdirs.user_config_dir("magi"))


def layer_paths(repo: Path | None, config_dir: Path) -> list[Path]:
    """The candidate layer files, lowest precedence first, whether or not they exist."""
    paths = [config_dir / "config.toml"]
    if repo is not None:
        paths += [repo / ".magi" / "config.toml", repo / "magi.toml"]
    return paths


def load_config(
    repo: Path | None,
    *,
    config_path: Path | None = None,
    environ: Mapping[str, str] | None = None,
    known_kinds: Collection[str] | None = None,
    user_config_dir: Path | None = None,
    system: Mapping[str, str] | None = None,
) -> ResolvedConfig:
    """Read, render, merge and validate every config layer; raise one ``ConfigError``."""
    env = dict(os.environ if environ is None else environ)
    context: dict[str, Any] = {"env": env, "system": dict(system or template.system_facts())}
    if repo is not None:
        context |= {"repo": str(repo), "repo_name": repo.resolve().name}
    if config_path is not None:
        if not config_path.is_file():
            raise ConfigError("no such config file", path=config_path)
        roots = [config_path]
    else:
        config_dir = user_config_dir or machine_config_dir(env)
        roots = [p for p in layer_paths(repo, config_dir) if p.is_file()]
    reader = _Reader(context)
    for root in roots:
        if root.resolve() in reader.seen:
            continue  # already merged as another layer's include
        reader.read(root, (), merge_plain({}, reader.vars))
        reader.vars = merge_plain(reader.vars, reader.vars_of_layer)
        reader.vars_of_layer = {}
    kinds = BUILTIN_KINDS if known_kinds is None else known_kinds
    return _resolve(reader, kinds)


def _resolve(reader: _Reader, kinds: Collection[str] | None) -> ResolvedConfig:
    """Merge what ``reader`` read and validate it; one ``ConfigError`` naming every problem.

    ``kinds`` None skips the agent-kind check (the App cannot know a runner's plugins)."""
    merged = merge_layers(reader.docs)
    problems = [*reader.problems, *(_Problem(c.message()) for c in merged.clashes)]
    if kinds is not None:
        problems += _kind_problems(merged.data, merged.sources, kinds)
    config: Config | None = None
    try:
        config = Config.model_validate(merged.data)
    except ValidationError as exc:
        for err in exc.errors():
            loc = tuple(err["loc"])
            problems.append(_validation_problem(err, loc, merged.sources))
    if config is not None:
        for key, loc in unimplemented_keys(config):
            what = NOT_IMPLEMENTED[key]
            message = f"not implemented yet ({what}): remove it or leave it at its default"
            problems.append(_Problem(message, source_for(loc, merged.sources), key=dotted(loc)))
    if problems or config is None:
        raise _combine(problems)
    return ResolvedConfig(config, [p for p, _ in reader.docs], dict(merged.sources))


def load_config_text(text: str, name: str = ".magi/config.toml") -> ResolvedConfig:
    """Validate one TOML text as the repository layer alone."""
    return load_repo_texts([(name, text)])


# The repository's own layers, lowest first (the App reads them from the default branch).
REPO_LAYERS = (".magi/config.toml", "magi.toml")


def load_repo_dir(root: Path, overrides: Mapping[str, str] | None = None) -> ResolvedConfig:
    """``load_repo_texts`` of the layers in a checkout at ``root``; ``overrides`` gives a
    layer's text in place of its file (``magi init`` before it writes the file)."""
    texts = {n: (root / n).read_text(encoding="utf-8") for n in REPO_LAYERS if (root / n).is_file()}
    texts.update(overrides or {})
    return load_repo_texts([(n, texts[n]) for n in REPO_LAYERS if n in texts])


def load_repo_texts(layers: Sequence[tuple[str, str]]) -> ResolvedConfig:
    """The repository's layers, lowest first (``.magi/config.toml`` then ``magi.toml``), as
    the App reads them from the default branch: merged and validated as ``load_config``
    does, with the same errors naming file, line and key.

    Nothing of the reading process leaks into them: templates see no environment and no
    system facts (a repository's config must not be able to quote the App's secrets back in
    an error), ``include`` is refused because there is no checkout to include from, and
    agent kinds are not checked (the runner's plugins are not the App's to know).
    """
    reader = _Reader({"env": {}, "system": {}})
    for name, text in layers:
        path = Path(name)
        data = reader.parse_text(path, text, merge_plain({}, reader.vars))
        if data is None:
            continue
        if "include" in data:
            data.pop("include")
            reader.problems.append(_Problem("include is not supported here", path, key="include"))
        reader.docs.append((path, data))
        if isinstance(data.get("vars"), Mapping):
            reader.vars = merge_plain(reader.vars, data["vars"])
    return _resolve(reader, None)


class _Reader:
    """Reads one file tree at a time, collecting documents (merge order) and problems."""

    def __init__(self, context: dict[str, Any]) -> None:
        self.context = context
        self.docs: list[tuple[Path, dict[str, Any]]] = []
        self.problems: list[_Problem] = []
        self.vars: dict[str, Any] = {}
        self.vars_of_layer: dict[str, Any] = {}
        self.seen: set[Path] = set()

    def read(self, path: Path, chain: tuple[Path, ...], lower_vars: dict[str, Any]) -> None:
        self.seen.add(path.resolve())
        data = self._parse(path, lower_vars)
        if data is None:
            return
        for included in self._includes(path, data.pop("include", None)):
            resolved = included.resolve()
            if resolved in (*chain, path.resolve()):
                names = " -> ".join(str(p) for p in (*chain, path.resolve(), resolved))
                self.problems.append(_Problem(f"include cycle: {names}", path, key="include"))
            elif resolved not in self.seen:
                # A file reached twice without a cycle (a diamond) merges once, where it was
                # first reached; merging it twice would clash with its own arrays.
                self.read(included, (*chain, path.resolve()), lower_vars)
        self.docs.append((path, data))
        if isinstance(data.get("vars"), Mapping):
            self.vars_of_layer = merge_plain(self.vars_of_layer, data["vars"])

    def _parse(self, path: Path, lower_vars: dict[str, Any]) -> dict[str, Any] | None:
        try:
            raw = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.problems.append(_Problem(f"cannot read: {exc}", path))
            return None
        return self.parse_text(path, raw, lower_vars)

    def parse_text(self, path: Path, raw: str, lower_vars: dict[str, Any]) -> dict[str, Any] | None:
        text = template.strip_comments(raw)
        try:
            first = template.render(
                text, {**self.context, "vars": template.lenient_vars(lower_vars)}
            )
            try:
                own = tomllib.loads(first).get("vars")
            except tomllib.TOMLDecodeError:
                own = None  # the second pass reports the file's real error
            merged_vars = merge_plain(lower_vars, own) if isinstance(own, Mapping) else lower_vars
            rendered = template.render(text, {**self.context, "vars": merged_vars})
        except template.TemplateFailure as exc:
            self.problems.append(_Problem(exc.message, path, exc.line))
            return None
        try:
            return tomllib.loads(rendered)
        except tomllib.TOMLDecodeError as exc:
            self.problems.append(_toml_problem(exc, path, rendered))
            return None

    def _includes(self, path: Path, value: object) -> list[Path]:
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.problems.append(_Problem("must be an array of file paths", path, key="include"))
            return []
        found: list[Path] = []
        for name in value:
            target = path.parent / Path(name).expanduser()
            if target.is_file():
                found.append(target)
            else:
                self.problems.append(_Problem(f"no such file: {target}", path, key="include"))
        return found


def _toml_problem(exc: tomllib.TOMLDecodeError, path: Path, text: str) -> _Problem:
    # tomllib (3.11) puts the position only in the message: "... (at line 3, column 7)".
    message = str(exc)
    match = re.search(r"\(at line (\d+), column \d+\)", message)
    if match:
        return _Problem(f"invalid TOML: {_TOML_AT.sub('', message)}", path, int(match[1]))
    if message.endswith("(at end of document)"):
        line = text.count("\n") + (0 if text.endswith("\n") else 1)
        return _Problem(f"invalid TOML: {message[: -len(' (at end of document)')]}", path, line)
    return _Problem(f"invalid TOML: {message}", path)


def _kind_problems(
    data: Mapping[str, Any], sources: Mapping[str, Path], known: Collection[str]
) -> list[_Problem]:
    agents = data.get("agents")
    if not isinstance(agents, list):
        return []
    problems = []
    for i, agent in enumerate(agents):
        kind = agent.get("kind") if isinstance(agent, Mapping) else None
        if isinstance(kind, str) and kind not in known:
            hint = difflib.get_close_matches(kind, list(known), n=1)
            also = f" (did you mean {hint[0]!r}?)" if hint else ""
            message = f"unknown agent kind {kind!r}{also}; known: {', '.join(sorted(known))}"
            problems.append(_Problem(message, sources.get("agents"), key=f"agents[{i}].kind"))
    return problems


def _validation_problem(
    err: Mapping[str, Any], loc: tuple[str | int, ...], sources: Mapping[str, Path]
) -> _Problem:
    kind = err["type"]
    if kind == "extra_forbidden":
        names = _field_names(loc[:-1])
        hint = difflib.get_close_matches(str(loc[-1]), names, n=1)
        message = "unknown key" + (f" (did you mean {hint[0]!r}?)" if hint else "")
    elif kind == "missing":
        message = "required key is missing"
    else:
        message = str(err["msg"]).removeprefix("Value error, ")
        value = err.get("input")
        if isinstance(value, str | int | float) and kind != "value_error":
            message += f" (got {value!r})"
    return _Problem(message, source_for(loc, sources), key=dotted(loc) or None)


def _field_names(loc: tuple[str | int, ...]) -> list[str]:
    """The keys the model accepts at ``loc``, for "did you mean" hints."""
    model: type[BaseModel] = Config
    for part in loc:
        if isinstance(part, int):
            continue
        info = model.model_fields.get(part)
        if info is None:
            return []
        candidates = [info.annotation, *getattr(info.annotation, "__args__", ())]
        nested = [c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)]
        if not nested:
            return []
        model = nested[0]
    return list(model.model_fields)


def _combine(problems: list[_Problem]) -> ConfigError:
    if len(problems) == 1:
        return problems[0].error()
    lines = "\n".join(f"  {p.error()}" for p in problems)
    return ConfigError(f"{len(problems)} problems in the config:\n{lines}")


def config_json_schema() -> dict[str, Any]:
    """The JSON Schema of one config file (any layer), for ``magi config schema``."""
    schema = Config.model_json_schema()
    schema["properties"]["include"] = {
        "type": "array",
        "items": {"type": "string"},
        "description": "Files (relative to this one) merged below this file.",
    }
    return {"$schema": JSON_SCHEMA_DIALECT, **schema, "title": "magi config"}
