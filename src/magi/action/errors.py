"""Errors the Action raises on purpose, each with its exit code (see ``magi.errors``)."""

from __future__ import annotations

from magi.errors import MagiError


class ActionError(MagiError):
    """The Action cannot do what it was asked as things stand; the message says the fix."""

    exit_code = 20


class CredentialsInCheckout(ActionError):
    """The agents job's checkout carries a credential every worktree (and agent) can read."""

    exit_code = 21


class TamperedArtifact(ActionError):
    """The artifact or its bundle is not what compete writes: publish refuses it whole."""

    exit_code = 22
