"""The one adapter to GitHub: the port, magi's models of GitHub's JSON, githubkit and App auth."""

from magi.github.models import Repo
from magi.github.port import CALLS, GitHubError, GitHubPort

__all__ = ["CALLS", "GitHubError", "GitHubPort", "Repo"]
