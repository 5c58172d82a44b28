"""What a writer approves by labeling an issue of a public repository, in one place.

magi runs on public repositories (it refuses nothing), but says what the label means
there: at setup (``magi app setup``), on each run's acknowledgement in a public repository,
and in docs/runner.md ("Public repositories"), in the same words.
"""

from __future__ import annotations

__all__ = ["PUBLIC_LABEL", "public_note"]

PUBLIC_LABEL = (
    "on a public repository, the `magi` label is a writer's approval to run the agents on "
    "your runner, with their logins, on an issue anyone may have written (its text is "
    "their task: the jail bounds what they reach, not what they are asked), and the tally, "
    "the transcripts and the code become public; and anyone's pull request can send its "
    "own workflow to a self-hosted runner unless the repository requires approval for "
    'outside contributors\' workflows (docs/runner.md, "Public repositories")'
)


def public_note(private: bool | None) -> str:
    """The line an acknowledgement carries on a public repository ('' otherwise)."""
    if private is not False:
        return ""
    return f"This repository is public: {PUBLIC_LABEL}.\n\n"
