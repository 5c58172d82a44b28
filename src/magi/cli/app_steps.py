"""What ``magi app setup`` says once GitHub created the App: the next steps, in order.

Each step is a command or a page: install the App, the workflow's two secrets, the
receiver (and, registered without ``--public-url``, how to turn its inactive webhook on
later), the workflow, the check. A public repository is told what the label approves
(``magi.core.person.public``) before the first label is put on anything.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from magi.core.person.public import PUBLIC_LABEL

__all__ = ["app_settings_url", "next_steps"]


def app_settings_url(github_url: str, org: str | None, slug: str) -> str:
    """The App's settings page (General: its webhook's URL and Active box)."""
    base = github_url.rstrip("/")
    owner = f"/organizations/{org}" if org else ""
    return f"{base}{owner}/settings/apps/{slug}"


def next_steps(
    got: dict[str, Any],
    out: Path,
    key: Path,
    *,
    public_url: str | None,
    org: str | None,
    github_url: str,
    secrets: tuple[str, str | None] | None = None,
) -> str:
    """The words printed (and shown on the page) after the App was created."""
    slug = str(got["slug"])
    installs = str(got.get("html_url", "")).rstrip("/") + "/installations/new"
    env = shlex.quote(str(out))
    lines = [
        f"Created the GitHub App {slug} (id {got['id']}).",
        f"Wrote {out} and {key}, readable by you only.",
        "",
        f"next: install it on your repository: {installs}",
    ]
    manual = (
        "then: in the repository's settings, add the secrets MAGI_APP_CLIENT_ID (from "
        f"{out}) and MAGI_APP_PRIVATE_KEY (the contents of {key})"
    )
    if secrets is None:
        lines.append(manual)
    elif secrets[1] is None:
        lines.insert(
            3, f"Set the secrets MAGI_APP_CLIENT_ID and MAGI_APP_PRIVATE_KEY on {secrets[0]}."
        )
    else:
        lines.append(f"{manual} ({secrets[1]})")
    if not public_url:
        # Without a receiver the workflow hears the events itself (its receive job runs
        # the App's handlers): nothing needs to reach this machine.
        settings = app_settings_url(github_url, org, slug)
        lines += [
            "then: `magi init --github --push` in the repository's checkout (the workflow "
            "and config written, committed and pushed, the `magi` label made): the workflow "
            "runs the App's handlers on the label and the comments itself (docs/action.md, "
            '"Without a receiver"), on your runner (docs/runner.md)',
            "or, with a receiver: start it (magi app serve --env-file "
            f"{env}, docs/receiver.md), open {settings}, set the Webhook URL to "
            "https://YOUR-HOST/webhook, tick Active and save; add "
            f"MAGI_PUBLIC_URL=https://YOUR-HOST to {out}; and `magi init --github --receiver`",
        ]
    else:
        lines += [
            f"then: start the receiver: magi app serve --env-file {env} (docs/receiver.md: "
            "TLS in front of it, a service, a tunnel); it checks its key and webhook and "
            "prints the URL GitHub must reach",
            "then: `magi init --github --receiver` in the repository, commit it, and a runner "
            "(docs/runner.md)",
        ]
    lines += [
        "then: `magi app check OWNER/REPO --env-file "
        f"{env}` says whether a label there will start a run, and if not, why",
        "",
        f"Note: {PUBLIC_LABEL}.",
    ]
    return "\n".join(lines)
