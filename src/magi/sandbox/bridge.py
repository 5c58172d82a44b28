"""The bridge: inside a jailed seat's own network namespace, the way to magi's egress proxy.

Run inside the jail by magi's own interpreter (``python -I -S bridge.py``: the stdlib alone,
no site, so it starts in milliseconds), ahead of the agent:

    bridge.py SOCKET PROXY_PORT [LOOPBACK_PORT,...] -- AGENT ARGV...

It listens on ``127.0.0.1:PROXY_PORT`` (what ``HTTPS_PROXY`` names) and carries each
connection, byte for byte, to the proxy's unix socket ``SOCKET`` (bound into the jail). It
also listens on each ``127.0.0.1:LOOPBACK_PORT``, a provider on the host's loopback the
seat's base URL names: a connection there is tunnelled (``CONNECT 127.0.0.1:PORT``) through
the proxy to the host's port, so a client that goes straight to loopback (``NO_PROXY``) finds
its model and nothing else. It binds all of them before it starts the agent, then waits for
the agent (and, for at most two seconds, for connections still carrying what it sent last)
and exits as it did. Nothing here decides anything: the proxy outside does.

Pure stdlib on purpose, and imports nothing of magi's (``-S`` leaves magi off the path).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading

_CHUNK = 65536
_DRAIN_S = 2.0  # after the agent exits, how long what it sent last may take to get out
_ACTIVE = [0]
_IDLE = threading.Condition()


def _pipe(a: socket.socket, b: socket.socket) -> None:
    def one_way(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(_CHUNK):
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    back = threading.Thread(target=one_way, args=(b, a), daemon=True)
    back.start()
    one_way(a, b)
    back.join()
    a.close()
    b.close()


def _tunnel(up: socket.socket, port: int) -> bool:
    """Ask the proxy for ``127.0.0.1:port``; whether it said yes."""
    up.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = up.recv(4096)
        if not chunk or len(got) > 65536:
            return False
        got += chunk
    return got.split(b" ", 2)[1:2] == [b"200"]


def _serve(listener: socket.socket, path: str, port: int | None) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_carry, args=(client, path, port), daemon=True).start()


def _carry(client: socket.socket, path: str, port: int | None) -> None:
    with _IDLE:
        _ACTIVE[0] += 1
    try:
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
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
        with _IDLE:
            _ACTIVE[0] -= 1
            _IDLE.notify_all()


def _listen(port: int, host: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


def _also_v6(port: int) -> list[tuple[socket.socket, int]]:
    """``[::1]:port`` too, where the namespace has IPv6: a client may try ``localhost`` as
    ``::1`` first (Node does)."""
    try:
        return [(_listen(port, "::1"), port)]
    except OSError:
        return []


def main(args: list[str]) -> int:
    if "--" not in args or args.index("--") not in (2, 3):
        print("usage: bridge.py SOCKET PROXY_PORT [PORT,...] -- ARGV...", file=sys.stderr)
        return 2
    cut = args.index("--")
    path, proxy_port = args[0], int(args[1])
    mirrors = [int(p) for p in args[2].split(",") if p] if cut == 3 else []
    try:
        plan = [(_listen(proxy_port), None), *((_listen(p), p) for p in mirrors)]
        plan += [pair for p in mirrors for pair in _also_v6(p)]
    except OSError as e:
        print(f"magi bridge: cannot listen inside the jail: {e}", file=sys.stderr)
        return 70
    for listener, port in plan:
        threading.Thread(target=_serve, args=(listener, path, port), daemon=True).start()
    try:
        child = subprocess.Popen(args[cut + 1 :])
    except OSError as e:
        print(f"magi bridge: {args[cut + 1]}: {e}", file=sys.stderr)
        return 127
    code = child.wait()
    with _IDLE:  # what the agent sent just before it exited still reaches the proxy
        _IDLE.wait_for(lambda: _ACTIVE[0] == 0, timeout=_DRAIN_S)
    sys.stdout.flush()
    if code < 0:  # killed by a signal: die of the same one, as the agent did
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    os._exit(main(sys.argv[1:]))
