"""A stand-in for GitHub's new-App web form, the manifest flow's first step, beside the API double.

GitHub's form takes a POSTed field ``manifest`` (the App's settings as JSON) at
``/settings/apps/new`` (a personal account) or ``/organizations/{org}/settings/apps/new``,
with an optional ``state`` in the query. Once the person confirms, GitHub creates the App
and redirects (302) to the manifest's ``redirect_url`` with a one-time ``code`` and the
``state``; the code is then exchanged through the API (``POST
/app-manifests/{code}/conversions``).
https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest

``NewAppForm`` skips the confirmation page: it checks the manifest as GitHub reads it (JSON,
an object, documented keys only, ``url`` and ``hook_attributes.url`` present), records it in
``posted``, makes an App from it and registers the code in the double's ``manifest_codes``,
so the conversion answers that App. A manifest it cannot read is answered 422 with the
reason, recorded in ``refused``, and no code is made.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode

from magi.testing.github_http import GitHubHTTP

__all__ = ["MANIFEST_KEYS", "NewAppForm", "Posted"]

# The manifest's parameters, as GitHub's page documents them (anything else is refused).
MANIFEST_KEYS = frozenset(
    {
        "name",
        "url",
        "hook_attributes",
        "redirect_url",
        "callback_urls",
        "setup_url",
        "description",
        "public",
        "default_events",
        "default_permissions",
        "request_oauth_on_install",
        "setup_on_update",
    }
)


@dataclass(frozen=True)
class Posted:
    """One form GitHub accepted: whose account, the state it carried, the manifest read."""

    org: str | None
    state: str | None
    manifest: dict[str, Any]
    code: str


class ManifestRefused(ValueError):
    """What GitHub's page would say about a manifest it cannot take."""


def read(body: bytes, content_type: str) -> dict[str, Any]:
    """The ``manifest`` field of a browser's form post, checked as GitHub reads it."""
    if not content_type.startswith("application/x-www-form-urlencoded"):
        raise ManifestRefused(f"the form was posted as {content_type!r}, not a urlencoded form")
    fields = parse_qs(body.decode("utf-8"), keep_blank_values=True)
    values = fields.get("manifest", [])
    if len(values) != 1:
        raise ManifestRefused(f"the form carries {len(values)} `manifest` fields, not one")
    try:
        data = json.loads(values[0])
    except json.JSONDecodeError as exc:
        raise ManifestRefused(f"the manifest is not JSON ({exc}): {values[0][:200]!r}") from exc
    if not isinstance(data, dict):
        raise ManifestRefused(f"the manifest is JSON but not an object: {values[0][:200]!r}")
    unknown = sorted(set(data) - MANIFEST_KEYS)
    if unknown:
        raise ManifestRefused(f"the manifest has keys GitHub does not take: {unknown}")
    if not isinstance(data.get("url"), str) or not data["url"]:
        raise ManifestRefused("the manifest has no `url` (the App's homepage, required)")
    hook = data.get("hook_attributes")
    if hook is not None and not (isinstance(hook, dict) and isinstance(hook.get("url"), str)):
        raise ManifestRefused(f"the manifest's hook_attributes has no `url`: {hook!r}")
    if not isinstance(data.get("redirect_url"), str) or not data["redirect_url"]:
        raise ManifestRefused("the manifest has no `redirect_url`: no code would come back")
    return data


@dataclass
class NewAppForm:
    """See the module docstring. ``asgi()`` serves it on the web host (github.com's place)."""

    double: GitHubHTTP
    owner: str = "octocat"
    posted: list[Posted] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    install_pages: list[str] = field(default_factory=list)  # the slugs whose page was opened
    next_id: int = 4242
    _pem: str = ""

    def pem(self) -> str:
        """One real RSA key for the Apps this form makes (the conversion hands it over)."""
        if not self._pem:
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import rsa

            key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            self._pem = key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.TraditionalOpenSSL,
                serialization.NoEncryption(),
            ).decode()
        return self._pem

    def make(self, manifest: dict[str, Any], org: str | None, web: str) -> dict[str, Any]:
        """The App GitHub makes from a manifest, as the conversion answers it."""
        name = str(manifest.get("name") or "app")
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        app_id, self.next_id = self.next_id, self.next_id + 1
        return {
            "id": app_id,
            "slug": slug,
            "node_id": f"A_{app_id}",
            "name": name,
            "description": manifest.get("description", ""),
            "external_url": manifest["url"],
            "html_url": f"{web}/apps/{slug}",
            "owner": {
                "login": org or self.owner,
                "id": 9000 + len(org or self.owner),
                "type": "Organization" if org else "User",
            },
            "permissions": dict(manifest.get("default_permissions") or {}),
            "events": list(manifest.get("default_events") or []),
            "client_id": f"Iv23li{secrets.token_hex(5)}",
            "client_secret": secrets.token_hex(20),
            "webhook_secret": secrets.token_hex(20),
            "pem": self.pem(),
        }

    def asgi(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import PlainTextResponse, RedirectResponse, Response
        from starlette.routing import Route

        async def new_app(request: Request) -> Response:
            org = request.path_params.get("org")
            try:
                data = read(await request.body(), request.headers.get("content-type", ""))
            except ManifestRefused as exc:
                self.refused.append(str(exc))
                return PlainTextResponse(f"Invalid GitHub App manifest: {exc}", 422)
            state = request.query_params.get("state")
            code = secrets.token_hex(20)
            web = str(request.base_url).rstrip("/")
            self.double.manifest_codes[code] = self.make(data, org, web)
            self.posted.append(Posted(org, state, data, code))
            query = urlencode({"code": code, **({"state": state} if state is not None else {})})
            target = data["redirect_url"]
            return RedirectResponse(f"{target}{'&' if '?' in target else '?'}{query}", 302)

        async def install(request: Request) -> Response:
            # GitHub's installation page of the App: where the person picks the account and
            # repositories and presses Install (here: shown, and the visit recorded).
            slug = request.path_params["slug"]
            target = request.query_params.get("target_id")
            self.install_pages.append(f"{slug} target {target}" if target else slug)
            return PlainTextResponse(f"Install {slug}")

        return Starlette(
            routes=[
                Route("/settings/apps/new", new_app, methods=["POST"]),
                Route("/organizations/{org}/settings/apps/new", new_app, methods=["POST"]),
                Route("/apps/{slug}/installations/new", install),
                # With the account chosen (``target_id``): its repositories and Install.
                Route("/apps/{slug}/installations/new/permissions", install),
            ]
        )
