"""Seats: asking an agent for one turn of a seat's conversation, for any kind of run.

A competition and a council both hold a ``Record`` with the seat fields (seats, turns,
redactions, events, timings); everything here writes those and nothing else.
"""

from magi.seats.ask import RETRYABLE, ask, ask_structured, ask_with_failover, node_timeout
from magi.seats.budget import check_budget, spent_usd
from magi.seats.context import (
    Cancelled,
    Reporter,
    SeatContext,
    SilentReporter,
    Stop,
    ensure_seat,
    seat_order,
    utcnow,
)

__all__ = [
    "RETRYABLE",
    "Cancelled",
    "Reporter",
    "SeatContext",
    "SilentReporter",
    "Stop",
    "ask",
    "ask_structured",
    "ask_with_failover",
    "check_budget",
    "ensure_seat",
    "node_timeout",
    "seat_order",
    "spent_usd",
    "utcnow",
]
