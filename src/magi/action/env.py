"""What GitHub Actions tells a step through its environment, read once at the entry point."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path

from magi.core.person.park import BadChannel, key_ok, read_channel
from magi.core.threads.markers import Seal
from magi.errors import ActionError
from magi.github.models import Comment, Repo

# The App's private key (the workflow's MAGI_APP_PRIVATE_KEY secret, the action's `app-key`
# input): the key magi's markers are sealed with, the same as the App's. Read once and
# taken out of the environment, so no process magi starts inherits it.
MARKER_KEY = "MAGI_MARKER_KEY"

__all__ = ["ActionEnv"]


@dataclass(frozen=True)
class ActionEnv:
    """The variables magi reads (https://docs.github.com/en/actions/reference/variables)."""

    repo: Repo
    api_url: str = "https://api.github.com"
    server_url: str = "https://github.com"
    run_id: str = ""
    ref_name: str = ""  # GITHUB_REF_NAME: the branch whose workflow file runs (a dispatch's)
    step_summary: Path | None = None
    output: Path | None = None
    runner_temp: Path | None = None
    app_login: str | None = None  # <app-slug>[bot]: whose comments are magi's
    marker_seal: Seal | None = field(default=None, repr=False)
    park: str = ""  # MAGI_PARK: the dispatch's park channel (magi.core.person.park)

    def ours(self, c: Comment) -> bool:
        """Whether magi's App wrote ``c``: its bot login (``<slug>[bot]``, a Bot), never any
        bot nor a person who registered the slug as a user name."""
        if self.app_login is None:
            raise ActionError(
                "MAGI_APP_SLUG is not set: magi cannot tell its App's comments from anyone's. "
                "Pass `app-slug: ${{ steps.app-token.outputs.app-slug }}` to the action"
            )
        return (
            c.user is not None
            and c.user.type == "Bot"
            and c.user.login.lower() == self.app_login.lower()
        )

    @property
    def seal(self) -> Seal:
        """The seal of magi's markers; a publishing command without it cannot go on."""
        if self.marker_seal is None:
            raise ActionError(
                f"{MARKER_KEY} is not set: this command reads and writes magi's sealed markers. "
                "Pass the App's private key to the action: "
                "`app-key: ${{ secrets.MAGI_APP_PRIVATE_KEY }}` (see workflows/magi.yml)"
            )
        return self.marker_seal

    def park_input(self, run_id: str) -> dict[str, str]:
        """The ``park`` input of a stage publish dispatches for run ``run_id`` (its next
        stage, a forked wave's seat jobs, their join): the channel this job was dispatched
        with, forwarded only when it is this run's under the App's own key."""
        if not self.park:
            return {}
        try:
            found = read_channel(self.park, self.repo.full_name, run_id)
        except BadChannel:
            return {}
        if not key_ok(self.seal, self.repo.full_name, run_id, found.key):
            return {}
        return {"park": found.to_input()}

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> ActionEnv:
        name = environ.get("GITHUB_REPOSITORY", "")
        try:
            repo = Repo.parse(name)
        except ValueError:
            raise ActionError(
                f"GITHUB_REPOSITORY is {name!r}; magi action runs inside GitHub Actions"
            ) from None

        def path(key: str) -> Path | None:
            return Path(environ[key]) if environ.get(key) else None

        slug = environ.get("MAGI_APP_SLUG", "")
        pem = environ.get(MARKER_KEY, "")
        if isinstance(environ, MutableMapping):
            environ.pop(MARKER_KEY, None)
        try:
            seal = Seal.from_private_key(pem) if pem.strip() else None
        except ValueError as exc:
            raise ActionError(f"{MARKER_KEY}: {exc}") from None
        return cls(
            repo=repo,
            api_url=environ.get("GITHUB_API_URL", cls.api_url).rstrip("/"),
            server_url=environ.get("GITHUB_SERVER_URL", cls.server_url).rstrip("/"),
            run_id=environ.get("GITHUB_RUN_ID", ""),
            ref_name=environ.get("GITHUB_REF_NAME", ""),
            step_summary=path("GITHUB_STEP_SUMMARY"),
            output=path("GITHUB_OUTPUT"),
            runner_temp=path("RUNNER_TEMP"),
            app_login=f"{slug}[bot]" if slug else None,
            marker_seal=seal,
            park=environ.get("MAGI_PARK", "").strip(),
        )

    @property
    def repo_url(self) -> str:
        return f"{self.server_url}/{self.repo.full_name}"

    @property
    def job_url(self) -> str | None:
        """The live log of this workflow run."""
        return f"{self.repo_url}/actions/runs/{self.run_id}" if self.run_id else None

    def set_output(self, name: str, value: str) -> None:
        """A step output (``name=value`` appended to ``$GITHUB_OUTPUT``)."""
        if self.output is None:
            return
        if "\n" in value:
            raise ActionError(f"output {name} must be one line")
        with self.output.open("a", encoding="utf-8") as f:
            f.write(f"{name}={value}\n")

    def summary(self, markdown: str) -> None:
        """Append to the job summary (``$GITHUB_STEP_SUMMARY``), already gated."""
        if self.step_summary is None:
            return
        with self.step_summary.open("a", encoding="utf-8") as f:
            f.write(markdown.rstrip("\n") + "\n")
