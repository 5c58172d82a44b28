"""The config: its schema, its layered loading and templating, and the default roster."""

from magi.config.load import (
    ResolvedConfig,
    config_json_schema,
    layer_paths,
    load_config,
    load_config_text,
    load_repo_texts,
    machine_config_dir,
)
from magi.config.roster import default_agents
from magi.config.starter import starter_config
from magi.model.config import (
    BUILTIN_KINDS,
    AgentConfig,
    AgentTimeouts,
    Blind,
    Budget,
    Config,
    Github,
    Graph,
    Merge,
    Notify,
    Prompts,
    Roles,
    Verify,
)

__all__ = [
    "BUILTIN_KINDS",
    "AgentConfig",
    "AgentTimeouts",
    "Blind",
    "Budget",
    "Config",
    "Github",
    "Graph",
    "Merge",
    "Notify",
    "Prompts",
    "ResolvedConfig",
    "Roles",
    "Verify",
    "config_json_schema",
    "default_agents",
    "layer_paths",
    "load_config",
    "load_config_text",
    "load_repo_texts",
    "machine_config_dir",
    "starter_config",
]
