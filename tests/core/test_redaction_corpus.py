"""The redaction corpus: no secret magi knows reaches a seat, the record or a comment."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import textwrap

import pytest

from magi.core.text import secrets_scan
from magi.core.text.sanitize import redact_secrets
from magi.core.threads.posting import Policy, gate

# Samples are templates and a value, joined only at run time, so that no scanner (a push
# protection included) mistakes this file for a leak.
B64_40 = "a+iCOoxvSQSNFnviw2VueE0ubS+WFFui409hKgHL"
B64_88 = "VNbWkPVu8114AQe92yNKdncV39DiEaj+O7wLTy0/CuhSr834TV8T8HgmZWokPvPGZq5K0ZW658Wi+MWIDS9R/Q=="
HEX32 = "84678c5cecde85c83661bb021cee7043"
HEX48 = "cde7ccaf721f5fb6e87ffc9c05a69c42529ce35d6ab6820a"
HEX64 = "e423949acf7555c6110ce2c578a17c499f31a9962a6b2ad322e0efcc2701d178"
LOW24 = "fqsjuowjnymxrdilawnziouk"
LOW64 = "tm3xaxki17dtm0z9po3bef1mjd57854vjrjwstaeel6gmxrwdkc5rzkcgow8q0mm"
R20 = "5v6PHxam1jsdqS0AdhW4"
R24 = "pOijW17qgRNsPnGniFXTFncR"
R35 = "rCuWsYeaL6z_D9hdVq-Q7TX5jGnVG6pzQjN"
R36 = "U9HBfu0onGcUwMIOOPlbTxFEk32CZb6rRdnR"
R43 = "oNXA7UbTwHdWux0ACK5UkEZwTUqd2dAnBVLpuE27_yB"
R44 = "e1FvYiRst9gGr9dBUtV2_9NrJrbWqdHPF1GZrrsmYmxd"
R76 = "UsSZ46C4Dc6ClS-tvbIPQMBg6xztbutCovoZppAAckFCmFA3bZMOT1e_fZ9xekG8HuLRV-HXLgoK"
R91 = "LfFu0YiWUjttyhrQRC6odxV30BGSgOEnJ4xUmcFOtMvBlX6bBGmkcnnk39vaQXo2P9CpVwH2ymrSM51lSxEjvx552Pj"
AKIA = "Z7Q2V4XK9R3M5T8W"  # after "AKIA"
JWT = "eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9"  # after the header
JWT_HEADER = "eyJhbGciOiJIUzI1NiJ9."

# (id, kind recorded, template, value): the text is template.format(v=value), and the
# value must be gone from what redaction returns.
SECRETS: list[tuple[str, str, str, str]] = [
    # The misses.
    ("password-then-words", "password", "password={v} for prod", "hunter2"),
    ("env-token-then-words", "token", "API_TOKEN={v} and go", "abc123xyz0"),
    ("bare-aws-secret", "aws_secret_access_key", "the aws secret is {v} today", B64_40),
    ("aws-secret-env", "aws_secret_access_key", "AWS_SECRET={v}", B64_40),
    ("aws-csv", "aws_secret_access_key", "AKIA" + AKIA + ",{v}", B64_40),
    ("azure-short-key", "azure_storage_key", "AccountKey={v};", B64_40),
    # Every format detect-secrets knows: one sample per plugin, two for a few.
    ("artifactory-akc", "artifactory_token", "artifactory: AKC{v}", "p8jRPXJuBizoNxd6f3kq8Zz"),
    ("artifactory-ap", "artifactory_token", 'maven "AP6{v}"', "xK3jR9qLw2pZ8tY"),
    ("aws-key-id", "aws_access_key_id", "key AKIA{v} here", AKIA),
    ("aws-quoted-secret", "aws_secret_access_key", 'aws_key = "{v}"', B64_40),
    (
        "azure-storage",
        "azure_storage_key",
        "DefaultEndpointsProtocol=https;AccountName=magi;AccountKey={v};EndpointSuffix=x.net",
        B64_88,
    ),
    ("basic-auth-url", "connection_password", "https://deploy:{v}@git.example.com/x", "Pa55-w0rd"),
    ("cloudant", "cloudant_key", "cloudant_password = '{v}'", HEX64),
    (
        "discord",
        "discord_token",
        "bot MTk4NjIyNDgzNDcxOTI1MjQ4.{v}",
        "Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    ),
    ("github-classic", "github_token", "push with ghp_{v}", R36),
    ("github-oauth", "github_token", "gho_{v}", R36),
    ("gitlab", "gitlab_token", "GITLAB=glpat-{v}", R20),
    ("ibm-cloud-iam", "ibm_cloud_iam_key", 'ibm_cloud_iam_key = "{v}"', R44),
    ("ibm-cos-hmac", "ibm_cos_hmac_key", 'ibm_cos_hmac_secret_access_key = "{v}"', HEX48),
    ("jwt", "jwt", "Cookie: session=" + JWT_HEADER + "{v}", JWT),
    ("mailchimp", "mailchimp_key", "mc {v}-us12", HEX32),
    ("npmrc", "npm_token", "//registry.npmjs.org/:_authToken=npm_{v}", R36),
    ("openai", "openai_api_key", "sk-" + R20 + "T3Blbk{v}", "FJ" + R20),
    ("pypi", "pypi_token", "pypi-AgEIcHlwaS5vcmc{v}", R76),
    ("sendgrid", "sendgrid_key", "SG.qlB0yoFEqcI2DncY0vLCZt.{v}", R43),
    ("slack-token", "slack_token", "xoxb-1234567890-0987654321-{v}", LOW24),
    ("slack-webhook", "slack_webhook", "https://hooks.slack.com/services/T0AB/B0AB/{v}", R24),
    ("softlayer", "softlayer_key", 'softlayer_api_key = "{v}"', LOW64),
    ("square", "square_oauth_secret", "sq0csp-{v}", R43),
    ("stripe", "stripe_key", "sk_live_{v}", R24),
    ("stripe-longer-than-its-pattern", "stripe_key", "STRIPE=sk_live_{v}", R91),
    ("telegram", "telegram_token", "bot 123456789:{v}", R35),
    ("twilio-sid", "twilio_key", "AC{v}", HEX32),
    ("twilio-key", "twilio_key", "SK{v} key", HEX32),
    # What the scanner lacks: magi's own patterns.
    ("github-fine-grained", "github_token", "github_pat_11ABCDEFG0{v}", "a" * 70),
    ("anthropic", "api_key", "sk-ant-{v}", "api03-abcdefghijklmn0pq"),
    ("openai-project", "api_key", "sk-proj-{v}", "abc123def456ghi789jkl"),
    ("google", "google_api_key", "AIza{v}", "SyA-1234567890abcdefghijklmnopqrstu"),
    ("npm-bare", "npm_token", "npm_{v}", R36),
    ("huggingface", "huggingface_token", "hf_{v}", "FPSQGnkP5ByQ7sXiHydiTaWfkDhWEdeOuh"),
    ("stripe-test", "stripe_key", "sk_test_{v}", R24),
    ("aws-secret-by-name", "aws_secret_access_key", "aws_secret_access_key = {v}", B64_40),
    (
        "azure-service-bus",
        "azure_shared_access_key",
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={v}",
        B64_40,
    ),
    (
        "azure-sas",
        "azure_sas_token",
        "https://x.blob.core.windows.net/c/log.txt?sv=2022-11-02&sp=r&sig={v}",
        "sRWXSRV9f4dpUtuJy0YkUzbOKr6rnYNXVoYh3b5n0ym%3D",
    ),
    ("authorization", "authorization", 'curl -H "Authorization: Bearer {v}"', "abc.def-123"),
    ("url-password-symbols", "connection_password", "postgres://app:{v}@db/app", "p!ss(w0rd)"),
    ("slack-app", "slack_token", "xapp-1-A0123456789-{v}", LOW24),
    # Keywords in assignments.
    ("kwarg", "password", "connect(password={v})", "s3cr3t"),
    ("json-secret", "secret", '{{"client_secret": "{v}"}}', "q8Zr-2mVx"),
    ("passphrase", "password", "passphrase: {v}", "correct-horse-9"),
    ("yaml-password", "password", "password: {v}  # prod", "changeme"),
    ("ado-password", "password", "Server=db1;Password={v};", "Secr3t"),
]
TEXTS = [(s[0], s[1], s[2].format(v=s[3]), s[3]) for s in SECRETS]

# Text that names secrets, hashes and ids without holding a secret: it must come through.
NOT_SECRETS = [
    "fixed in da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "secret scanning fix landed in 3f786850e387550fdab836ed7e6dc881de23001b",
    "bumped the aws sdk in 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (AKIA rotation)",
    "token_count = 3",
    "max_tokens = 100",
    "max_token = 4096",
    '{"token": 5}',
    "rotate the token: 2 of them",
    'password_field = form.get("password")',
    "request 123e4567-e89b-12d3-a456-426614174000 failed",
    "pull ghcr.io/o/app@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    '"integrity": "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7k'
    'xvUR87oPkRR+JOgr1Jw=="',
    "secretary = 'Jane'",
    "self.token = token",
    "token: Token",
    'password: str = ""',
    "password = None",
    'if token == "abc":',
    '    "password": password',
    "def login(password=password):",
    "private_key = load(path)",
    'api_key = os.environ["API_KEY"]',
    "token = get_token()",
    "secret = settings.SECRET_KEY",
    "the token: it expires hourly",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "password: ${DB_PASSWORD}",
    "key=lambda item: item[1]",
    "risk-management-framework-2024-edition",
    "APEnvironmentBuilder is the builder",  # Artifactory's AP shape, but no digit
    "OrganizationMembershipRepo.delete.handle_membership_removal_events",  # Discord's shape
    "see https://github.com/owner/repo/pull/42 and https://example.com:8080/a?b=c",
]
# Addresses in code stay in a competition prompt; a council removes them (personal=True).
CODE_WITH_ADDRESSES = ["postgres://app:${DB_PASSWORD}@db/app", "redis://cache:6379/0"]

IDS = [s[0] for s in SECRETS]
ALSO = {"AKIA" + AKIA + "," + B64_40: ("aws_access_key_id",)}  # the CSV holds a key id too


@pytest.mark.parametrize(("kind", "text", "value"), [s[1:] for s in TEXTS], ids=IDS)
def test_each_secret_is_gone_and_its_kind_recorded(kind, text, value):
    """The value is replaced by its kind's marker and recorded as that kind, never itself."""
    out, found = redact_secrets(text, "prompt:impl-A")
    assert value not in out
    assert value[-8:] not in out  # no tail left behind by a pattern shorter than the token
    assert f"[REDACTED:{kind}]" in out
    assert {r.kind for r in found} == {kind, *ALSO.get(text, ())}  # reported once, as itself
    assert value not in repr(found)


@pytest.mark.parametrize(("text", "value"), [s[2:] for s in TEXTS], ids=IDS)
def test_a_council_redacts_the_same_secrets(text, value):
    """personal=True only adds kinds: every secret still goes."""
    out, _found = redact_secrets(text, "question", personal=True)
    assert value not in out


@pytest.mark.parametrize("text", NOT_SECRETS)
@pytest.mark.parametrize("personal", [False, True], ids=["prompt", "council"])
def test_text_that_only_looks_like_a_secret_comes_through(text, personal):
    """Commit SHAs, digests, UUIDs, counts and code that names a secret are left alone."""
    assert redact_secrets(text, "prompt", personal=personal) == (text, [])


@pytest.mark.parametrize("text", CODE_WITH_ADDRESSES)
def test_placeholders_and_hosts_stay_in_a_competition_prompt(text):
    """A templated password and a host name are no secrets where addresses are not removed."""
    assert redact_secrets(text, "prompt") == (text, [])


def test_nothing_of_the_corpus_reaches_a_seat_the_record_or_a_comment():
    """The whole corpus as one text: the prompt, the redaction records and the gated comment."""
    corpus = "\n".join(s[2] for s in TEXTS)
    values = [s[3] for s in TEXTS]
    for personal in (False, True):
        prompt, found = redact_secrets(corpus, "prompt:impl-A", personal=personal)
        record = json.dumps([r.model_dump() for r in found])
        assert [v for v in values if v in prompt] == []
        assert [v for v in values if v in record] == []
    posted = gate(corpus, Policy())
    assert [v for v in values if v in posted.text or v in " ".join(posted.notes)] == []
    assert sum(r.count for r in posted.redactions) >= len(SECRETS)


def test_the_record_counts_each_kind_once_with_its_count():
    """Three GitHub tokens and a password make two records: kind and count, no value."""
    token = "ghp_" + R36
    text = f"{token}\n{token} password=hunter2 for prod\n{token}"
    _out, found = redact_secrets(text, "task")
    assert sorted((r.where, r.kind, r.count) for r in found) == [
        ("task", "github_token", 3),
        ("task", "password", 1),
    ]


def test_a_line_after_one_that_lowercasing_lengthens_is_still_scanned():
    """ "İ" lowercases to two characters; the prefilter still finds the right line."""
    text = "\n".join(["İ" * 50, "x" * 10, "password=hunter2 for prod", "y" * 100])
    out, _found = redact_secrets(text, "task")
    assert "hunter2" not in out


# One block per marker detect-secrets' private-key plugin knows; the body must go with it.
PRIVATE_KEYS = {
    marker: f"-----{marker}-----\n{{b}}\n-----{marker.replace('BEGIN', 'END')}-----"
    for marker in ("BEGIN DSA PRIVATE KEY", "BEGIN EC PRIVATE KEY", "BEGIN OPENSSH PRIVATE KEY")
} | {
    "BEGIN PGP PRIVATE KEY BLOCK": (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{b}\n-----END PGP PRIVATE KEY BLOCK-----"
    ),
    # A service-account JSON keeps the key on one line, with escaped newlines.
    "BEGIN PRIVATE KEY": (
        '"private_key": "-----BEGIN PRIVATE KEY-----\\n{b}\\n-----END PRIVATE KEY-----\\n"'
    ),
    "BEGIN RSA PRIVATE KEY": (
        "-----BEGIN RSA PRIVATE KEY-----\n{b}\n{b}\n-----END RSA PRIVATE KEY-----"
    ),
    "BEGIN SSH2 ENCRYPTED PRIVATE KEY": (
        "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n{b}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----"
    ),
    "PuTTY-User-Key-File-2": (
        "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nPrivate-Lines: 1\n{b}\n"
        "Private-MAC: 8f3e2a"
    ),
}
KEY_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"


def test_every_private_key_marker_of_the_scanner_has_a_sample():
    """The samples cover exactly the markers the scanner's private-key plugin flags."""
    from detect_secrets.plugins.private_key import PrivateKeyDetector

    assert {p.pattern for p in PrivateKeyDetector.denylist} == set(PRIVATE_KEYS)


@pytest.mark.parametrize("block", PRIVATE_KEYS.values(), ids=list(PRIVATE_KEYS))
def test_a_private_key_goes_whole_from_begin_to_end(block):
    """The block and its body become one marker; the text around it stays."""
    out, found = redact_secrets(f"key:\n{block.format(b=KEY_BODY)}\nafter", "task")
    assert KEY_BODY[:12] not in out
    assert out.startswith("key:\n")
    assert out.endswith("\nafter")
    assert out.count("[REDACTED:private_key]") == 1
    assert [(r.kind, r.count) for r in found] == [("private_key", 1)]


def test_every_detect_secrets_plugin_is_run_or_left_out_for_a_reason():
    """A plugin a new detect-secrets adds fails here until it is sampled or left out."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    shipped = {cls.__name__ for cls in get_mapping_from_secret_type_to_class().values()}
    run = set(secrets_scan.scanner_plugins())
    assert run.isdisjoint(secrets_scan.LEFT_OUT)
    assert run | set(secrets_scan.LEFT_OUT) == shipped


def test_every_plugin_magi_runs_has_a_sample_it_flags():
    """For each plugin run, some corpus text is flagged by that plugin itself."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    by_name = {cls.__name__: cls for cls in get_mapping_from_secret_type_to_class().values()}
    unsampled = [
        name
        for name in secrets_scan.scanner_plugins()
        if not any(next(iter(by_name[name]().analyze_string(s[2])), None) for s in TEXTS)
    ]
    assert unsampled == []


# A fingerprint of each run plugin's patterns, as the triggers in core.secrets_scan were
# written for them. A detect-secrets upgrade that changes a pattern fails here: check
# that the plugin's triggers still hold (each must be in every line the pattern matches),
# then update the fingerprint.
FINGERPRINTS = {
    "ArtifactoryDetector": "73b07f367f52",
    "AWSKeyDetector": "71a8df27f70e",
    "AzureStorageKeyDetector": "b4ac01445d8a",
    "BasicAuthDetector": "f8c9e6adef0c",
    "CloudantDetector": "b6a1216beb14",
    "DiscordBotTokenDetector": "e8cc08c35f53",
    "GitHubTokenDetector": "c06412cd4c35",
    "GitLabTokenDetector": "208bc450b38c",
    "IbmCloudIamDetector": "fc0bf3786c5e",
    "IbmCosHmacDetector": "59503c343fe8",
    "JwtTokenDetector": "90f09773dba9",
    "MailchimpDetector": "dee1cfb51abb",
    "NpmDetector": "98490516304a",
    "OpenAIDetector": "86f831ee4d42",
    "PypiTokenDetector": "8482dee4825b",
    "SendGridDetector": "4dfd257ab90f",
    "SlackDetector": "008b349b833e",
    "SoftlayerDetector": "d6802c56a266",
    "SquareOAuthDetector": "71af0e102c08",
    "StripeDetector": "fd51cbb18180",
    "TelegramBotTokenDetector": "b3a83412d0c3",
    "TwilioKeyDetector": "134baff8b86a",
}


def _fingerprint(name: str) -> str:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    cls = next(c for c in get_mapping_from_secret_type_to_class().values() if c.__name__ == name)
    patterns = "\n".join(f"{p.flags}:{p.pattern}" for p in cls().denylist)
    return hashlib.sha256(patterns.encode()).hexdigest()[:12]


def test_the_scanner_patterns_are_those_the_triggers_were_written_for():
    """Each plugin's patterns are the ones its prefilter strings were derived from."""
    now = {name: _fingerprint(name) for name in secrets_scan.scanner_plugins()}
    assert now == FINGERPRINTS


@pytest.mark.parametrize(
    "kind", sorted({s[1] for s in SECRETS} | set(secrets_scan.scanner_kinds()))
)
def test_kinds_are_short_snake_case_words(kind):
    """A kind is what a record and a comment show: short, lower-case, underscores."""
    assert re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+){0,4}", kind)
    assert len(kind) <= 24


def test_the_scanner_opens_no_socket_reads_no_file_and_leaves_warnings_alone():
    """Importing detect-secrets and scanning with it reach no network and read no config.

    Checked in a fresh interpreter with an audit hook installed before the first scan,
    which is when the scanner is imported. The one socket allowed is urllib3's probe for
    IPv6 at import, a bind to ::1 that sends nothing. detect-secrets' import also turns on
    logging.captureWarnings, which magi undoes.
    """
    probe = textwrap.dedent(
        """
        import json, os, sys, warnings
        from magi.core.text.sanitize import redact_secrets
        assert "detect_secrets" not in sys.modules
        shown = warnings.showwarning
        seen = []
        def hook(event, args):
            if event.startswith(("socket.", "subprocess.", "urllib.")) or event == "os.system":
                seen.append([event, repr(args[1:])])  # what, not the socket object
            elif event == "open" and isinstance(args[0], str):
                path = args[0]
                if not path.endswith((".py", ".pyc", ".so")) and not os.path.isdir(path):
                    seen.append([event, path])
        sys.addaudithook(hook)
        redact_secrets(sys.stdin.read(), "prompt")
        assert "detect_secrets" in sys.modules
        assert warnings.showwarning is shown
        print(json.dumps(seen))
        """
    )
    corpus = "\n".join(s[2] for s in TEXTS)
    done = subprocess.run(
        [sys.executable, "-c", probe], input=corpus, capture_output=True, text=True, check=True
    )
    probe_of_ipv6 = [["socket.__new__", "(10, 1, 0)"], ["socket.bind", "(('::1', 0),)"]]
    assert [e for e in json.loads(done.stdout) if e not in probe_of_ipv6] == []


def test_the_corpus_through_a_whole_council_reaches_no_seat_record_or_comment(tmp_path):
    """End to end: the corpus as the question and as a seat's answer, through the Action's
    council path. No value reaches a seat's prompt, the stored record or the posted comment."""
    import council_helpers as ch
    from github_helpers import REPO
    from magi.demo.council_scripted import ScriptedAsker
    from magi.testing.github import FakeGitHub

    corpus = "\n".join(s[2] for s in TEXTS)
    values = [s[3] for s in TEXTS]
    asker = ScriptedAsker({"sage-1": "says:A", "sage-2": "says:A", "sage-3": "says:B"})
    answer = {"position": "B", "rationale": "they leaked:\n" + corpus, "confidence": 0.5}
    asker.overrides[("sage-3", "ask")] = "```json\n" + json.dumps(answer) + "\n```\n"
    body = "/magi council\nWhich of these should we rotate first?\n" + corpus
    inputs, out, rec = ch.on_github(tmp_path, body, asker)
    fake = FakeGitHub()
    ch.publish_on(fake, inputs, out)
    (comment,) = fake.comments_on(REPO, 1)
    stored = "".join(p.read_text() for p in (tmp_path / "home").rglob("*.json"))
    artifact = (out / "council.json").read_text()
    for where_, text in (
        ("a seat's prompt", "\n".join(p for _, _, p in asker.prompts)),
        ("the stored record", stored + rec.model_dump_json()),
        ("the artifact", artifact),
        ("the comment", comment),
    ):
        assert [v for v in values if v in text] == [], where_
