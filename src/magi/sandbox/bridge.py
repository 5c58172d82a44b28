"""The bridge: inside a jailed seat's own network namespace, the way to magi's egress proxy.

Run inside the jail by magi's own interpreter (``python -I -S bridge.py``: no site), ahead
of the agent:

    bridge.py SOCKET PROXY_PORT [LOOPBACK_PORT,...] -- AGENT ARGV...

It listens on ``127.0.0.1:PROXY_PORT`` (what ``HTTPS_PROXY`` names) and carries each
connection, byte for byte, to the proxy's unix socket ``SOCKET`` (bound into the jail). It
also listens on each ``127.0.0.1:LOOPBACK_PORT`` (and ``[::1]``), a provider on the host's
loopback the seat's base URL names: a connection there is tunnelled (``CONNECT
127.0.0.1:PORT``) through the proxy to the host's port, so a client that goes straight to
loopback (``NO_PROXY``) finds its model and nothing else. It binds all of them before it
starts the agent, then waits for the agent (and, for at most two seconds, for connections
still carrying what it sent last) and exits as it did. Nothing here decides anything: the
proxy outside does.

It starts on every jailed turn, so it imports only what the interpreter has built in
(``_socket``, ``_thread``, ``os``): ``socket``, ``threading`` and ``subprocess`` would double
its start-up (``enum``, ``selectors``, ``signal``), which a turn waits for. Nothing of
magi's is imported (``-S`` leaves magi off the path).
"""

from __future__ import annotations

import _socket
import _thread
import os
import sys

_CHUNK = 65536
_DRAIN_S = 2.0  # after the agent exits, how long what it sent last may take to get out
_COUNT = _thread.allocate_lock()  # guards _ACTIVE
_IDLE = _thread.allocate_lock()  # held while any connection is being carried
_ACTIVE = [0]


def _one_way(src: _socket.socket, dst: _socket.socket, done: _thread.LockType) -> None:
    try:
        while data := src.recv(_CHUNK):
            dst.sendall(data)
        dst.shutdown(_socket.SHUT_WR)
    except OSError:
        pass
    finally:
        done.release()


def _pipe(a: _socket.socket, b: _socket.socket) -> None:
    back = _thread.allocate_lock()
    back.acquire()
    _thread.start_new_thread(_one_way, (b, a, back))
    mine = _thread.allocate_lock()
    mine.acquire()
    _one_way(a, b, mine)
    back.acquire()  # both ways are done
    a.close()
    b.close()


def _tunnel(up: _socket.socket, port: int) -> bool:
    """Ask the proxy for ``127.0.0.1:port``; whether it said yes."""
    up.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = up.recv(4096)
        if not chunk or len(got) > 65536:
            return False
        got += chunk
    return got.split(b" ", 2)[1:2] == [b"200"]


def _busy(by: int) -> None:
    with _COUNT:
        _ACTIVE[0] += by
        if by > 0 and _ACTIVE[0] == 1:
            _IDLE.acquire()
        elif by < 0 and _ACTIVE[0] == 0:
            _IDLE.release()


def _carry(fd: int, path: str, port: int | None) -> None:
    client = _socket.socket(fileno=fd)
    try:
        up = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            up.connect(path)
            if port is not None and not _tunnel(up, port):
                raise OSError("refused")
        except OSError:
            up.close()
            client.close()
            return
        _pipe(client, up)
    finally:
        _busy(-1)


def _serve(listener: _socket.socket, path: str, port: int | None) -> None:
    while True:
        fd, _ = listener._accept()  # type: ignore[attr-defined]  # the fd, as socket.accept wraps it
        _busy(+1)  # before the thread starts: the agent may exit right after it connects
        _thread.start_new_thread(_carry, (fd, path, port))


def _listen(port: int, host: str = "127.0.0.1") -> _socket.socket:
    family = _socket.AF_INET6 if ":" in host else _socket.AF_INET
    sock = _socket.socket(family, _socket.SOCK_STREAM)
    sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


def _also_v6(port: int) -> list[tuple[_socket.socket, int]]:
    """``[::1]:port`` too, where the namespace has IPv6: a client may try ``localhost`` as
    ``::1`` first (Node does)."""
    try:
        return [(_listen(port, "::1"), port)]
    except OSError:
        return []


def _run(argv: list[str]) -> int:
    """Start the agent, wait for it, then for what it sent last; its exit code."""
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ)
    except OSError as e:
        print(f"magi bridge: {argv[0]}: {e}", file=sys.stderr)
        return 127
    _, status = os.waitpid(pid, 0)
    if _IDLE.acquire(timeout=_DRAIN_S):
        _IDLE.release()
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code  # killed by a signal: as a shell says it


def main(args: list[str]) -> int:
    if "--" not in args or args.index("--") not in (2, 3):
        print("usage: bridge.py SOCKET PROXY_PORT [PORT,...] -- ARGV...", file=sys.stderr)
        return 2
    cut = args.index("--")
    path, proxy_port = args[0], int(args[1])
    mirrors = [int(p) for p in args[2].split(",") if p] if cut == 3 else []
    if cut + 1 == len(args):
        print("magi bridge: no command to run", file=sys.stderr)
        return 2
    try:
        plan: list[tuple[_socket.socket, int | None]] = [(_listen(proxy_port), None)]
        plan += [(_listen(p), p) for p in mirrors]
        plan += [pair for p in mirrors for pair in _also_v6(p)]
    except OSError as e:
        print(f"magi bridge: cannot listen inside the jail: {e}", file=sys.stderr)
        return 70
    for listener, port in plan:
        _thread.start_new_thread(_serve, (listener, path, port))
    return _run(args[cut + 1 :])


if __name__ == "__main__":
    os._exit(main(sys.argv[1:]))  # the carrier threads end with it
