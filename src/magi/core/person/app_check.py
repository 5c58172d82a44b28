"""Why a label did nothing, decided from what GitHub holds about the App (``magi app check``).

Each function reads one part of GitHub's answers (the App, its webhook, its installations,
its recent deliveries) and returns what it found: a problem names its cause and its fix; a
``fine`` finding says what was checked and holds. No I/O here: ``magi.cli.app_check`` asks
GitHub and prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "PLACEHOLDER_HOOK",
    "Finding",
    "app_findings",
    "delivery_findings",
    "hook_findings",
    "install_findings",
    "runner_findings",
    "without_receiver",
]

# Where `magi app setup` points a webhook it registers without --public-url (inactive).
PLACEHOLDER_HOOK = "https://example.invalid/webhook"
_LEVEL = {"read": 1, "write": 2, "admin": 3}


@dataclass(frozen=True)
class Finding:
    """One thing checked: fine, a warning (said, not failing), or a problem with its fix."""

    why: str
    fix: str = ""
    fine: bool = False
    warn: bool = False
    note: bool = False  # said, neither fine nor a problem: something not checked, and why


def _ok(what: str) -> Finding:
    return Finding(what, fine=True)


def _lacking(wanted: Mapping[str, str], have: Mapping[str, Any]) -> list[str]:
    return sorted(
        f"{name}: {level}"
        for name, level in wanted.items()
        if _LEVEL.get(str(have.get(name)), 0) < _LEVEL.get(level, 0)
    )


def app_findings(
    app: Mapping[str, Any], wanted: Mapping[str, str], events: Sequence[str], settings: str
) -> list[Finding]:
    """The App asks for every permission and event of magi's manifest (app.yml)."""
    out = [_ok(f"the App {app.get('slug')} (id {app.get('id')}) takes this key")]
    lacking = _lacking(wanted, app.get("permissions") or {})
    if lacking:
        out.append(Finding(
            f"the App does not ask for {', '.join(lacking)} (app/README.md says why each)",
            f"add them on {settings}/permissions, then accept them on each installation",
        ))  # fmt: skip
    missing = sorted(set(events) - set(app.get("events") or []))
    if missing:
        out.append(Finding(
            f"the App is not subscribed to {', '.join(missing)}: GitHub never sends them",
            f"tick them under Subscribe to events on {settings}/permissions",
        ))  # fmt: skip
    return out


def hook_findings(hook: Mapping[str, Any], public_url: str | None, settings: str) -> list[Finding]:
    """The webhook points at this receiver's ``/webhook``, signed, over verified TLS."""
    url = str(hook.get("url") or "")
    out: list[Finding] = []
    where = f"{public_url.rstrip('/')}/webhook" if public_url else "https://YOUR-HOST/webhook"
    fix = f"on {settings}, set the Webhook URL to {where}, tick Active and save"
    if not url or url == PLACEHOLDER_HOOK:
        out.append(Finding(
            "the App's webhook has no address (setup without --public-url registers it "
            "inactive): GitHub delivers nothing", fix,
        ))  # fmt: skip
    elif public_url and url.rstrip("/") != where:
        out.append(Finding(f"the App's webhook points at {url}, not at {where}", fix))
    elif not url.startswith("https://"):
        out.append(Finding(f"the App's webhook {url} is not https", fix))
    else:
        out.append(_ok(f"the webhook points at {url}"))
    if str(hook.get("insecure_ssl", "0")) != "0":
        out.append(Finding(
            "the webhook skips TLS verification (insecure_ssl)",
            f"untick it on {settings}: a receiver's certificate is free (docs/receiver.md)",
        ))  # fmt: skip
    if str(hook.get("content_type", "json")) != "json":
        out.append(Finding(
            f"the webhook sends {hook.get('content_type')}, the receiver reads JSON",
            f"set Content type to application/json on {settings}",
        ))  # fmt: skip
    if not hook.get("secret"):
        out.append(Finding(
            "the webhook has no secret: the receiver refuses every unsigned delivery (401)",
            f"set one on {settings} and the same as GITHUB_WEBHOOK_SECRET",
        ))  # fmt: skip
    return out


def without_receiver(hook: Mapping[str, Any], settings: str) -> list[Finding]:
    """The webhook of an App whose repository's workflow runs on its own triggers (its
    receive job runs the App's handlers): none is needed, and one that delivers somewhere
    means a receiver acts on each label and command too (docs/action.md)."""
    url = str(hook.get("url") or "")
    if not url or url == PLACEHOLDER_HOOK:
        return [_ok(
            "the App's webhook is off: the workflow hears the label and the comments itself "
            "(docs/action.md, \"Without a receiver\")"
        )]  # fmt: skip
    return [Finding(
        f"the App's webhook delivers to {url} and the workflow runs on its own triggers too: "
        "each label and command would be acted on twice",
        "keep one: `magi init --github --receiver --force` (the receiver), or empty the "
        f"Webhook URL and untick Active on {settings} (the workflow alone)",
    )]  # fmt: skip


def install_findings(
    repo: str,
    installation: Mapping[str, Any] | None,
    accounts: Sequence[str],
    granted_for: Mapping[str, str],
    install_url: str,
) -> list[Finding]:
    """The App is installed on ``repo``, not suspended, with what the App asks for."""
    owner = repo.split("/")[0]
    if installation is None:
        if owner.casefold() in {a.casefold() for a in accounts}:
            return [Finding(
                f"the App is installed on {owner} but not given {repo}",
                f"add {repo} under Repository access on the installation's page ({install_url})",
            )]  # fmt: skip
        return [Finding(f"the App is not installed on {repo}", f"install it: {install_url}")]
    out = [_ok(f"the App is installed on {repo} (installation {installation.get('id')})")]
    if installation.get("suspended_at"):
        out.append(Finding(
            f"the installation on {owner} is suspended: GitHub sends it nothing",
            "unsuspend it on the installation's page",
        ))  # fmt: skip
    lacking = _lacking(granted_for, installation.get("permissions") or {})
    if lacking:
        out.append(Finding(
            f"the installation has not granted {', '.join(lacking)} that the App asks for",
            "accept the App's updated permissions on the installation's page",
        ))  # fmt: skip
    return out


_ANSWERS = {
    401: (
        "the receiver refused the signature: its GITHUB_WEBHOOK_SECRET is not the App's "
        "webhook secret",
        "set the App's Webhook secret and GITHUB_WEBHOOK_SECRET to one value, restart the "
        "receiver, and redeliver from the App's Advanced page",
    ),
    503: (
        "the receiver is up but cannot work (its key, a setting, or GitHub unreachable)",
        "GET /healthz on the receiver names each problem; once it answers 200, redeliver "
        "from the App's Advanced page",
    ),
    404: (
        "GitHub reached a server with no magi webhook at that address",
        "the Webhook URL must be the receiver's address followed by /webhook",
    ),
    413: ("the receiver refused a delivery over 25 MB", "nothing to fix for a label"),
}


def _answered(row: Mapping[str, Any]) -> Finding | None:
    code = int(row.get("status_code") or 0)
    said = f"{row.get('event')}.{row.get('action')} at {row.get('delivered_at')}"
    if 200 <= code < 300:
        return None
    if code in _ANSWERS:
        why, fix = _ANSWERS[code]
        return Finding(f"{said}: answered {code}: {why}", fix)
    if code == 0:
        return Finding(
            f"{said}: GitHub got no answer ({row.get('status') or 'failed to connect'})",
            "start the receiver (magi app serve) where the Webhook URL points; it must be "
            "reachable from the internet over https with a valid certificate (docs/receiver.md)",
        )
    return Finding(
        f"{said}: answered {code} ({row.get('status')})",
        "a proxy in front of the receiver answered for it: is the receiver running behind it?",
    )


def delivery_findings(
    rows: Sequence[Mapping[str, Any]], repo: str, repo_id: int | None
) -> list[Finding]:
    """What the receiver answered GitHub's recent deliveries for ``repo`` (newest first)."""
    if not rows:
        return [Finding(
            "GitHub lists no delivery of the App's webhook at all: it is inactive, or "
            "nothing happened since it was set",
            "tick Active on the App's page (Webhook), then label the issue again",
        )]  # fmt: skip
    mine = [r for r in rows if repo_id is None or r.get("repository_id") == repo_id]
    labels = [r for r in mine if r.get("event") == "issues" and r.get("action") == "labeled"]
    out: list[Finding] = []
    latest = labels[0] if labels else (mine[0] if mine else rows[0])
    problem = _answered(latest)
    if problem is not None:
        out.append(problem)
    elif labels:
        out.append(
            _ok(f"the last label on {repo} was delivered and taken ({latest.get('status_code')})")
        )
    if not labels:
        out.append(Finding(
            f"none of GitHub's last {len(rows)} deliveries is a label on {repo}",
            "label the issue (again) once the problems above are fixed; an issue labelled "
            "before the App was installed there was never delivered",
        ))  # fmt: skip
    return out


def runner_findings(runners: Sequence[Mapping[str, Any]], wanted: Sequence[str]) -> list[Finding]:
    """An online self-hosted runner has every label a competition's first job asks for."""
    want = {w.casefold() for w in wanted}

    def labels(r: Mapping[str, Any]) -> set[str]:
        return {str(x.get("name", "")).casefold() for x in r.get("labels") or []}

    fits = [r for r in runners if want <= labels(r)]
    online = [r for r in fits if r.get("status") == "online"]
    shown = ", ".join(wanted)
    if online:
        return [_ok(f"runner {online[0].get('name')} is online with the labels {shown}")]
    if fits:
        names = ", ".join(str(r.get("name")) for r in fits)
        return [Finding(
            f"the runners with the labels {shown} ({names}) are offline: a run's jobs would "
            "wait queued",
            "start the runner's service (docs/runner.md)",
        )]  # fmt: skip
    return [Finding(
        f"no runner of the repository has the labels {shown} ([github] runner_labels): a "
        "run's jobs would wait queued until GitHub cancels them",
        "register a self-hosted runner with those labels (docs/runner.md), or change "
        "runner_labels and run `magi init --github --force`",
    )]  # fmt: skip
