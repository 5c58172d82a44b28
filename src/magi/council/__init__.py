"""Council mode: one question to a weighted, blind panel, orchestrated and counted by code."""

from magi.council.asker import AgentAsker, Asker, Reply
from magi.council.modes import run_council
from magi.council.rounds import Council, Job
from magi.council.setup import new_council

__all__ = ["AgentAsker", "Asker", "Council", "Job", "Reply", "new_council", "run_council"]
