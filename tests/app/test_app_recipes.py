"""The receiver's recipes (app/recipes/) run here: the systemd unit passes `systemd-analyze
verify`; the Caddyfile, in Debian's caddy, gets its certificate from Debian's pebble (a
local ACME server) by itself and passes GitHub's https deliveries to the receiver."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import os
import queue
import shutil
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn

ROOT = Path(__file__).parents[2]
RECIPES = ROOT / "app" / "recipes"


def test_the_systemd_unit_verifies() -> None:
    """Its ExecStart pointed at this venv's magi (the only line a machine changes)."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (apt-get install systemd)")
    unit = (RECIPES / "magi-app.service").read_text()
    assert "ExecStart=/srv/magi-app/venv/bin/magi app serve --env-file" in unit
    here = Path(sys.executable).with_name("magi")
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    with _tempdir(tmp) as where:
        target = where / "magi-app.service"
        target.write_text(unit.replace("/srv/magi-app/venv/bin/magi", str(here)))
        res = subprocess.run(
            [analyze, "verify", str(target)], capture_output=True, text=True, check=False
        )
    assert res.returncode == 0, res.stderr
    assert res.stderr.strip() == "", res.stderr  # verify warns on stderr and still exits 0


@contextmanager
def _tempdir(base: Path) -> Iterator[Path]:
    import tempfile

    with tempfile.TemporaryDirectory(dir=base) as name:
        yield Path(name)


def _get_as(name: str, port: int, trusted: Path) -> tuple[int, str]:
    """GET /healthz from 127.0.0.1:port as a client that resolved ``name`` there would:
    ``name`` the TLS server name (checked against the certificate) and the Host."""
    import http.client

    context = ssl.create_default_context(cafile=str(trusted))
    raw = socket.create_connection(("127.0.0.1", port), timeout=30)
    conn = http.client.HTTPSConnection(name, port, context=context, timeout=30)
    conn.sock = context.wrap_socket(raw, server_hostname=name)
    try:
        conn.request("GET", "/healthz", headers={"Host": name})
        answer = conn.getresponse()
        return answer.status, answer.read().decode()
    finally:
        conn.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ca(where: Path) -> tuple[Path, Path, Path]:
    """A CA and pebble's own server certificate for 127.0.0.1, signed by it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "magi test CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pebble")]))
        .issuer_name(ca_name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    pem = serialization.Encoding.PEM
    paths = (where / "ca.pem", where / "cert.pem", where / "key.pem")
    paths[0].write_bytes(ca.public_bytes(pem))
    paths[1].write_bytes(leaf.public_bytes(pem))
    paths[2].write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return paths


# A bound on waiting for a process to say something, never a measure: it only turns a
# stuck process into a failure that shows what it said.
SAYS_WITHIN = 180.0


class _Said:
    """A process's output, line by line, read by a thread of its own (a full pipe would
    stall the process) into a queue the test waits on."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self.reader = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self.reader.start()

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def until(self, words: str) -> None:
        """Wait for a line holding ``words``; the process ending first fails the test."""
        while True:
            try:
                line = self.lines.get(timeout=SAYS_WITHIN)
            except queue.Empty:
                line = None
            if line is None:
                raise AssertionError(f"never said {words!r}: {''.join(self.seen[-20:])}")
            self.seen.append(line)
            if words in line:
                return


def _accepting(port: int, said: _Said) -> None:
    """Wait until 127.0.0.1:port takes a connection. pebble says "Management interface
    listening" before its goroutine has bound the port, and says nothing after: there is
    no line to wait for, so the port itself is asked, a bounded number of times (a bound,
    never a measure: a port that never opens fails with what pebble said)."""
    import time

    for _ in range(int(SAYS_WITHIN / 0.05)):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"127.0.0.1:{port} never opened: {''.join(said.seen[-20:])}")


@contextmanager
def _running(argv: list[str], env: dict[str, str]) -> Iterator[_Said]:
    """``argv`` as a process of this test's, ended (by its own handle) when the block ends."""
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    ) as proc:
        said = _Said(proc)
        try:
            yield said
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            said.reader.join(timeout=30)


@contextmanager
def _receiver(port: int) -> Iterator[None]:
    """magi's receiver (the App, GitHub faked in memory) on 127.0.0.1:port."""
    from github_helpers import SETTINGS
    from magi.app import create_app
    from magi.testing.github import FakeGitHub

    fake = FakeGitHub()

    async def ports(_installation: int | None, _repo: object) -> FakeGitHub:
        return fake

    app = create_app(SETTINGS, ports=ports, app_login="magi-app[bot]")
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    sock.listen(8)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def test_the_caddyfile_gets_a_certificate_by_itself_and_reaches_the_receiver(tmp_path) -> None:
    caddy, pebble = shutil.which("caddy"), shutil.which("pebble")
    if caddy is None or pebble is None:
        pytest.skip("the proxy recipe's test needs Debian's caddy and pebble (apt-get install)")
    ca, cert, key = _ca(tmp_path)
    acme, manage = _free_port(), _free_port()
    http_port, https_port, receiver = _free_port(), _free_port(), _free_port()
    config = {
        "pebble": {
            "listenAddress": f"127.0.0.1:{acme}",
            "managementListenAddress": f"127.0.0.1:{manage}",
            "certificate": str(cert),
            "privateKey": str(key),
            "httpPort": http_port,
            "tlsPort": https_port,
            "ocspResponderURL": "",
            "externalAccountBindingRequired": False,
        }
    }
    (tmp_path / "pebble.json").write_text(json.dumps(config))
    # Nothing resolves magi.example.com here: pebble takes every challenge as passed.
    quiet = {"PEBBLE_VA_ALWAYS_VALID": "1", "PEBBLE_VA_NOSLEEP": "1", "PEBBLE_WFE_NONCEREJECT": "0"}
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), **quiet}
    env |= {"XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "conf")}
    recipe = (RECIPES / "Caddyfile").read_text().replace("127.0.0.1:8080", f"127.0.0.1:{receiver}")
    glob = (
        f"{{\n\tdebug\n\tadmin off\n\thttp_port {http_port}\n\thttps_port {https_port}\n"
        f"\tacme_ca https://127.0.0.1:{acme}/dir\n\tacme_ca_root {ca}\n"
        f"\tstorage file_system {tmp_path / 'caddy'}\n\tskip_install_trust\n}}\n"
    )
    (tmp_path / "Caddyfile").write_text(glob + recipe)
    with (
        _receiver(receiver),
        _running([pebble, "-config", str(tmp_path / "pebble.json")], env) as acme_server,
    ):
        acme_server.until("ACME directory available")
        _accepting(manage, acme_server)
        trust = ssl.create_default_context(cafile=str(ca))
        chain = [
            httpx.get(f"https://127.0.0.1:{manage}/{part}/0", verify=trust).text
            for part in ("roots", "intermediates")
        ]
        (tmp_path / "issuer.pem").write_text("".join(chain))
        argv = [caddy, "run", "--config", str(tmp_path / "Caddyfile"), "--adapter", "caddyfile"]
        with _running(argv, env) as proxy:
            # certmagic says so (at debug) once the certificate is in the cache handshakes use
            proxy.until("added certificate to cache")
            # Nothing resolves magi.example.com here: to caddy's port, with the name as
            # the TLS server name and the Host, as a client that resolved it would.
            status, body = _get_as("magi.example.com", https_port, tmp_path / "issuer.pem")
    assert status == 200, body
    assert json.loads(body) == {"status": "ok"}
