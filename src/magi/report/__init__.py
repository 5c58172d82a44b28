"""The run report: one view of a run (``view``), rendered as text, JSON and markdown.

``view.build`` applies the blind rule once; ``text``, ``json`` and ``markdown`` only read
the view it returns, so the three renderings cannot disagree about what may be shown.
"""

from __future__ import annotations

from magi.report.gfm import Safe, Section, inline, quote
from magi.report.json import node_seconds, report_json, seat_usage, view_json
from magi.report.markdown import Comment, comments, render_markdown, render_sections
from magi.report.text import cells, first_line, render, render_view, trim
from magi.report.view import HIDDEN, RunView, build, revealed

__all__ = [
    "HIDDEN",
    "Comment",
    "RunView",
    "Safe",
    "Section",
    "build",
    "cells",
    "comments",
    "first_line",
    "inline",
    "node_seconds",
    "quote",
    "render",
    "render_markdown",
    "render_sections",
    "render_view",
    "report_json",
    "revealed",
    "seat_usage",
    "trim",
    "view_json",
]
