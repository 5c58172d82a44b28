"""The egress proxy on its own: what it forwards, what it refuses and records, never more."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator

import pytest

from magi.core.seats.egress import allowlist
from magi.sandbox.egress import Proxy


@pytest.fixture
def upstream() -> Iterator[tuple[int, list[bytes]]]:
    """A loopback server that keeps the first bytes it is sent and answers "ok"."""
    got: list[bytes] = []
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            got.append(conn.recv(65536))
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], got
    server.close()


def _ask(proxy: Proxy, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(proxy.socket_path)
        sock.sendall(request)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
        return out


def test_plain_http_is_forwarded_in_origin_form_without_proxy_headers(
    upstream: tuple[int, list[bytes]],
) -> None:
    port, got = upstream
    proxy = Proxy(allowlist(extra=[f"127.0.0.1:{port}"]))
    request = (
        f"GET http://127.0.0.1:{port}/v1/models?x=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Proxy-Authorization: Basic c2VjcmV0\r\nConnection: close\r\n\r\n"
    )
    answer = _ask(proxy, request.encode())
    assert answer.endswith(b"\r\n\r\nok")
    assert got[0].startswith(b"GET /v1/models?x=1 HTTP/1.1\r\n")
    assert b"Proxy-Authorization" not in got[0]
    assert proxy.close() == []


def test_a_host_not_allowed_is_refused_and_recorded_without_its_payload() -> None:
    proxy = Proxy(allowlist(defaults=["api.anthropic.com"]))
    answer = _ask(proxy, b"CONNECT evil.example:443 HTTP/1.1\r\nX-Secret: hunter2\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 403 ")
    answer = _ask(proxy, b"POST http://api.anthropic.com:8080/x HTTP/1.1\r\n\r\nhunter2")
    assert answer.startswith(b"HTTP/1.1 403 ")
    assert proxy.close() == ["evil.example:443", "api.anthropic.com:8080"]


def test_what_is_no_proxy_request_is_refused_as_such() -> None:
    proxy = Proxy(allowlist(defaults=["api.anthropic.com"]))
    assert _ask(proxy, b"GET /v1 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    assert proxy.close() == []


def test_the_proxies_of_a_process_share_one_accepting_thread_and_directory() -> None:
    """Opening a turn's proxy starts no thread and makes no directory of its own (it cost
    every jailed turn both): one thread accepts for every proxy of the process."""
    before = threading.active_count()
    proxies = [Proxy(allowlist(defaults=["api.anthropic.com"])) for _ in range(3)]
    try:
        assert threading.active_count() <= before + 1  # the one thread, on the first proxy
        assert len({os.path.dirname(p.socket_path) for p in proxies}) == 1
        assert len({p.socket_path for p in proxies}) == 3
        for proxy in proxies:
            assert _ask(proxy, b"GET /v1 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    finally:
        for proxy in proxies:
            proxy.close()


def test_proxies_open_at_once_keep_their_own_allowlists_and_refusals(
    upstream: tuple[int, list[bytes]],
) -> None:
    port, got = upstream
    mine = Proxy(allowlist(extra=[f"127.0.0.1:{port}"]))
    other = Proxy(allowlist(defaults=["api.anthropic.com"]))
    connect = f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode()
    assert _ask(other, connect).startswith(b"HTTP/1.1 403 ")  # its allowlist, not mine's
    get = f"GET http://127.0.0.1:{port}/x HTTP/1.1\r\nConnection: close\r\n\r\n"
    assert _ask(mine, get.encode()).endswith(b"\r\n\r\nok")
    assert _ask(mine, b"CONNECT evil.example:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403 ")
    path = mine.socket_path
    assert mine.close() == ["evil.example:443"]
    assert not os.path.exists(path)  # a closed proxy takes no connection
    with (
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock,
        pytest.raises(FileNotFoundError),
    ):
        sock.connect(path)
    assert _ask(other, b"CONNECT evil.example:8443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403 ")
    assert other.close() == [f"127.0.0.1:{port}", "evil.example:8443"]
    assert len(got) == 1
