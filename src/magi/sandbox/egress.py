"""The egress proxy: a jailed seat's one way out of its network namespace.

A jailed seat's network is its own (bwrap ``--unshare-net``: loopback only). magi runs this
proxy outside the jail, listening on a unix socket that is bound into the jail; inside, the
bridge (``magi.sandbox.bridge``) carries the seat's connections to it. It speaks the two
things HTTP clients send a proxy: ``CONNECT host:port`` (HTTPS, WebSockets, anything
tunnelled) and a plain-HTTP request with an absolute URL. A destination the allowlist
(``magi.core.seats.egress``) does not hold is answered ``403`` and recorded as ``host:port``
(never a byte of what was sent); an allowed one is connected to by name, here, and the bytes
are copied both ways. Nothing is decrypted: the proxy sees the name a client asked for.

Written here rather than taken from a package: Anthropic's sandbox-runtime is a Node
program that wraps the whole command in a bwrap of its own (magi's jail is its own) and
needs socat for its bridge; proxy.py and mitmproxy are general proxies many times the size
of the one decision needed here. This is the stdlib's sockets and threads.

Each turn has a proxy of its own (its allowlist, its socket, its refusals), and every proxy
of a process is served by one thread (``_Acceptor``: a selector over their sockets, in one
private directory made once): opening a turn's proxy is a socket bound and registered, not
a directory made and a thread started, and closing it is the socket closed and removed. A
connection is handed to a thread of its own, as before.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import selectors
import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from magi.core.seats.egress import INSIDE_SOCKET, Allowlist, Net, allows, loopback_ports

__all__ = [
    "HEAD_MAX",
    "PROXY_VARS",
    "Proxy",
    "close",
    "no_net",
    "open_net",
    "open_proxy",
    "pipe",
    "reach",
]

PROXY_PORT = 3128  # the bridge's port inside the jail, unless a loopback provider has it
# What the CLIs read (curl's lowercase names, the uppercase most others read); Node's own
# fetch reads them only with NODE_USE_ENV_PROXY=1 (Node 24+). Loopback goes straight to the
# bridge's listener for that port, which tunnels it through the proxy all the same.
PROXY_VARS = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy")
NO_PROXY = "localhost,127.0.0.1,::1"

HEAD_MAX = 64 * 1024
REFUSALS_KEPT = 1000  # a turn's refusals recorded; the rest are refused all the same
_CONNECT_TIMEOUT_S = 15.0
_HEAD_TIMEOUT_S = 30.0
_CHUNK = 65536

Connect = Callable[[str, int], socket.socket]


def _connect(host: str, port: int) -> socket.socket:
    sock = socket.create_connection((host, port), timeout=_CONNECT_TIMEOUT_S)
    sock.settimeout(None)
    return sock


def pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until both sides have finished; then close both."""

    def one_way(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(_CHUNK):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    back = threading.Thread(target=one_way, args=(b, a), daemon=True)
    back.start()
    one_way(a, b)
    back.join()
    a.close()
    b.close()


def _read_head(sock: socket.socket) -> tuple[bytes, bytes] | None:
    """The request head (through the blank line) and what came after it; None if none."""
    sock.settimeout(_HEAD_TIMEOUT_S)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(_CHUNK)
        if not chunk or len(data) > HEAD_MAX:
            return None
        data += chunk
    sock.settimeout(None)
    head, _, rest = data.partition(b"\r\n\r\n")
    return head + b"\r\n\r\n", rest


def _target(line: str) -> tuple[str, str, int, str] | None:
    """(method, host, port, origin-form path) of a proxy request line; None if not one."""
    parts = line.split(" ")
    if len(parts) != 3:
        return None
    method, where, _ = parts
    try:
        if method.upper() == "CONNECT":
            url = urlsplit(f"//{where}")
            port = url.port
            return (method, url.hostname or "", port, "") if url.hostname and port else None
        url = urlsplit(where)
        if url.scheme.lower() not in ("http", "ws") or not url.hostname:
            return None
        path = (url.path or "/") + (f"?{url.query}" if url.query else "")
        return method, url.hostname, url.port or 80, path
    except ValueError:
        return None


def _reply(sock: socket.socket, status: str, why: str = "") -> None:
    body = f"{why}\n".encode() if why else b""
    head = f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    with contextlib.suppress(OSError):
        sock.sendall(head.encode() + body)


class _Acceptor:
    """Accepts for every open proxy of this process: one thread, one selector over their
    listening sockets, one ``0700`` directory (nobody else's to open) for their sockets.
    Made on the first proxy; idle, not gone, once the last one closes."""

    def __init__(self) -> None:
        self.pid = os.getpid()  # a forked child has no such thread: it makes its own
        self.dir = tempfile.mkdtemp(prefix="magi-egress-")
        self._names = itertools.count()
        self._selector = selectors.DefaultSelector()
        self._lock = threading.Lock()
        # A proxy registered while the loop waits wakes it where the selector looks only at
        # what it was handed (poll, select); epoll sees it without (no thread woken).
        self._wakes = not isinstance(self._selector, getattr(selectors, "EpollSelector", ()))
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        threading.Thread(target=self._loop, name="magi-egress", daemon=True).start()

    def bind(self, server: socket.socket) -> str:
        """Bind ``server`` to a new path in the directory; the path."""
        path = os.path.join(self.dir, f"{next(self._names)}.sock")
        try:
            server.bind(path)
        except FileNotFoundError:  # a temp cleaner took it under a long-lived process
            with contextlib.suppress(FileExistsError):
                os.mkdir(self.dir, 0o700)
            server.bind(path)
        return path

    def add(self, proxy: Proxy) -> None:
        with self._lock:
            self._selector.register(proxy._server, selectors.EVENT_READ, proxy)
        if self._wakes:
            with contextlib.suppress(OSError):
                self._wake_w.send(b"\0")

    def remove(self, proxy: Proxy) -> None:
        with self._lock, contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(proxy._server)

    def _loop(self) -> None:
        while True:
            for key, _ in self._selector.select():
                if key.data is None:
                    with contextlib.suppress(OSError):
                        self._wake_r.recv(4096)
                    continue
                key.data._accept()

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


_ACCEPTOR: _Acceptor | None = None
_ACCEPTOR_LOCK = threading.Lock()


def _acceptor() -> _Acceptor:
    global _ACCEPTOR
    with _ACCEPTOR_LOCK:
        if _ACCEPTOR is None or _ACCEPTOR.pid != os.getpid():
            _ACCEPTOR = _Acceptor()
        return _ACCEPTOR


class Proxy:
    """One turn's proxy: its unix socket, its allowlist, the refusals it recorded."""

    def __init__(self, allowed: Allowlist, connect: Connect = _connect) -> None:
        self.allowed = allowed
        self._connect = connect
        self._acceptor = _acceptor()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket_path = self._acceptor.bind(self._server)
        self._server.listen(128)
        # Never blocks the one accepting thread: a closed proxy's wake-up finds nothing.
        self._server.setblocking(False)
        self._lock = threading.Lock()
        self.refused: list[str] = []
        self._closed = False
        self._acceptor.add(self)

    def _accept(self) -> None:
        try:
            client, _ = self._server.accept()
        except OSError:
            return  # closed, or already taken
        client.setblocking(True)
        threading.Thread(target=self._handle, args=(client,), daemon=True).start()

    def _handle(self, client: socket.socket) -> None:
        try:
            self._forward(client)
        except OSError:
            client.close()

    def _forward(self, client: socket.socket) -> None:
        got = _read_head(client)
        if got is None:
            client.close()
            return
        head, rest = got
        first, _, headers = head.decode("latin-1").partition("\r\n")
        found = _target(first)
        if found is None:
            _reply(client, "400 Bad Request", "magi egress: not a proxy request")
            client.close()
            return
        method, host, port, path = found
        if not allows(self.allowed, host, port):
            self._refuse(host, port)
            _reply(client, "403 Forbidden", f"magi egress: {host}:{port} is not allowed")
            client.close()
            return
        try:
            upstream = self._connect(host, port)
        except OSError as e:
            _reply(client, "502 Bad Gateway", f"magi egress: {host}:{port}: {e}")
            client.close()
            return
        try:
            if method.upper() == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                version = first.rsplit(" ", 1)[1]
                kept = [h for h in headers.split("\r\n") if not h.lower().startswith("proxy-")]
                line = f"{method} {path} {version}"
                upstream.sendall("\r\n".join([line, *filter(None, kept), "", ""]).encode())
            if rest:
                upstream.sendall(rest)
        except OSError:
            upstream.close()
            raise
        pipe(client, upstream)

    def _refuse(self, host: str, port: int) -> None:
        name = f"[{host}]" if ":" in host else host
        with self._lock:
            if len(self.refused) < REFUSALS_KEPT:  # a seat retrying in a loop fills no record
                self.refused.append(f"{name}:{port}")

    def close(self) -> list[str]:
        """Stop listening (connections under way finish); the refusals, in order."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._acceptor.remove(self)
                self._server.close()
                with contextlib.suppress(OSError):
                    os.unlink(self.socket_path)
            return list(self.refused)


def no_net() -> Net:
    """A network namespace with no way out at all (a check command with no egress)."""
    return Net()


def open_net(allowed: Allowlist) -> Net:
    """A proxy for one turn allowing ``allowed``, and the bridge and variables to reach it."""
    proxy = open_proxy(allowed)
    mirrors = loopback_ports(allowed)
    port = next(p for p in range(PROXY_PORT, PROXY_PORT + 100) if p not in mirrors)
    bridge = (
        sys.executable,
        "-I",
        "-S",
        str(Path(__file__).with_name("bridge.py")),
        INSIDE_SOCKET,
        str(port),
        ",".join(map(str, mirrors)),
        "--",
    )
    url = f"http://127.0.0.1:{port}"
    env = [(name, url) for name in PROXY_VARS]
    env += [("NO_PROXY", NO_PROXY), ("no_proxy", NO_PROXY), ("NODE_USE_ENV_PROXY", "1")]
    return Net(socket=proxy.socket_path, bridge=bridge, env=tuple(env))


def reach(allowed: Allowlist, target: str, timeout: float = 5.0) -> str | None:
    """Ask a proxy allowing ``allowed`` for ``target`` (``host:port``), as a seat's CLI
    would: None when it connected, else why not (``magi doctor``, before anything is spent)."""

    def connect(host: str, port: int) -> socket.socket:
        return socket.create_connection((host, port), timeout=timeout)

    proxy = Proxy(allowed, connect)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout + 5)
            sock.connect(proxy.socket_path)
            sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
            answer = b""
            while (chunk := sock.recv(_CHUNK)) and len(answer) < HEAD_MAX:
                answer += chunk
                if answer.startswith(b"HTTP/1.1 200 "):
                    return None
    except OSError as e:
        return f"the proxy did not answer ({e})"
    finally:
        proxy.close()
    status, _, body = answer.decode("latin-1").partition("\r\n\r\n")
    why = body.strip().removeprefix("magi egress: ")
    return why or status.split("\r\n")[0] or "the proxy did not answer"


_OPEN: dict[str, Proxy] = {}
_OPEN_LOCK = threading.Lock()


def open_proxy(allowed: Allowlist) -> Proxy:
    """A new proxy for one turn, closed by `close` (or when magi exits)."""
    proxy = Proxy(allowed)
    with _OPEN_LOCK:
        _OPEN[proxy.socket_path] = proxy
    return proxy


def close(socket_path: str | None) -> list[str]:
    """Close the proxy listening on ``socket_path``: what it refused (nothing if none)."""
    with _OPEN_LOCK:
        proxy = _OPEN.pop(socket_path or "", None)
    return [] if proxy is None else proxy.close()


@atexit.register
def _close_all() -> None:
    for path in list(_OPEN):
        close(path)
    if _ACCEPTOR is not None and _ACCEPTOR.pid == os.getpid():
        _ACCEPTOR.close()
