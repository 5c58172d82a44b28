"""Running the repository's own commands (verify.e2e, verify.gate) through ``sh -c``.

They run candidate code, so they get the same allowlisted environment as an agent: no
GitHub token or App key reaches a test suite an agent just wrote; and, where seats are
jailed, the same jail as a writing seat in that tree (``jail``): a test a candidate wrote
cannot read the run records (who wrote what) and print them into the output judges read,
nor write into another candidate's tree or the user's checkout; and a network of its own,
with no way out unless ``[verify] egress`` names hosts (then magi's proxy, closed when the
check ends, its refusals said in the output's tail). One budget covers all the
commands of one check; output is capped and only its tail is kept for the record.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from magi.agents.base import CancelToken
from magi.agents.process import allowlisted_env, run
from magi.core.seats.jail import JailSpec, bwrap_argv
from magi.model.run import Verification
from magi.sandbox.egress import close

TAIL_LINES = 60
TAIL_CHARS = 6000


def tail(text: str, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> str:
    return "\n".join(text.rstrip("\n").splitlines()[-lines:])[-chars:]


def run_checks(
    commands: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    environ: Mapping[str, str],
    output_max_bytes: int,
    head: str | None = None,
    cancel: CancelToken | None = None,
    jail: JailSpec | None = None,
) -> Verification:
    """Run ``commands`` in order, stopping at the first failure; inside ``jail`` if one."""
    env = allowlisted_env(environ)
    started = time.monotonic()
    out: list[str] = []
    code: int | None = 0
    timed_out = False
    for cmd in commands:
        left = timeout - (time.monotonic() - started)
        if left <= 0:
            timed_out, code = True, None
            out.append(f"$ {cmd}\n[not started: the verification budget of {timeout:.0f}s ran out]")
            break
        argv = ["sh", "-c", cmd]
        net = jail.net if jail is not None else None
        if net is not None and net.socket:  # [verify] egress: through the proxy, no further
            argv = [*net.bridge, *argv]
            env.update(net.env)
        res = run(
            bwrap_argv(jail, argv) if jail is not None else argv,
            cwd=cwd,
            stdin=None,
            env=env,
            timeout=left,
            output_max_bytes=output_max_bytes,
            cancel=cancel,
            contained=jail is not None,
        )
        out.append(f"$ {cmd}\n{res.stdout}{res.stderr}".rstrip("\n"))
        if res.start_error:
            code = None
            out.append(res.start_error)
            break
        code = res.exit_code
        if res.timed_out:
            timed_out = True
            out.append(f"[timed out after {timeout:.0f}s; process group killed]")
            break
        if code != 0:
            break
    refused = close(jail.net.socket if jail is not None and jail.net is not None else None)
    if refused:
        hosts = ", ".join(dict.fromkeys(refused))
        out.append(f"[magi egress refused: {hosts}; see [verify] egress]")
    return Verification(
        passed=code == 0 and not timed_out,
        commands=list(commands),
        exit_code=code,
        timed_out=timed_out,
        tail=tail("\n".join(out)),
        head=head,
        duration_s=round(time.monotonic() - started, 3),
    )
