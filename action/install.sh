#!/usr/bin/env bash
# Installs magi from this action's own checkout into a virtualenv. magi itself comes from
# the action's commit (the pin); its dependencies are resolved from the package index, each
# held to the version constraints.txt names.
#
# On a self-hosted runner, a job that runs agents (compete, council, review, land, notify:
# commands that hold no token and no key) uses a virtualenv built once per pinned version
# (a digest of the action's files, constraints.txt and the Python) under
# MAGI_ACTION_CACHE (default ~/.cache/magi-action): no seat can write it (a seat's home is
# an empty scratch; magi's own interpreter and package are shown read-only at most,
# docs/jail.md), made read-only, and checked against the
# digest of each of its files, written when it was built, before every use; a cache that
# differs is refused. A job that holds the App's token or key never runs it: the agents
# job's own steps, on the same machine, could have written it; such a job installs afresh
# under RUNNER_TEMP, as every job on a GitHub-hosted runner does (a fresh machine: nothing
# to reuse).
set -euo pipefail
python="${MAGI_PYTHON:-python3}"
# magi needs Python 3.11; an older one fails later in pip's resolver, in words about
# platformdirs that name neither Python nor the fix.
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  found=$("$python" -c 'import platform; print(platform.python_version())' 2>/dev/null || echo "not runnable")
  echo "::error::magi needs Python >= 3.11; $python is $found: put one first on the runner's PATH as python3 (the runner directory's .path file, then restart the runner)" >&2
  exit 1
fi
src="${GITHUB_ACTION_PATH:?}"

fresh() { # $1: where
  "$python" -m venv "$1"
  "$1/bin/python" -m pip install -q --disable-pip-version-check \
    -c "$src/constraints.txt" "$src[github]"
}

# Every file of a tree (a symlink as its target's name), digested: one line per file, in
# one process (a process per file costs a minute on a slow machine's ~5,000 files).
manifest() { # $1: the tree
  "$python" -I - "$1" <<'PY'
import hashlib, os, sys
root = sys.argv[1]
found = []
for top, dirs, files in os.walk(root):
    for name in dirs + files:
        path = os.path.join(top, name)
        if os.path.islink(path):
            found.append(("link " + os.readlink(path), path))
        elif os.path.isfile(path):
            with open(path, "rb") as f:
                found.append(("file " + hashlib.file_digest(f, "sha256").hexdigest(), path))
for what, path in sorted(found, key=lambda x: x[1]):
    print(what, "./" + os.path.relpath(path, root))
PY
}

cached=""
case "${MAGI_ACTION_COMMAND:-}" in
  compete|council|review|land|notify)
    if [ "${RUNNER_ENVIRONMENT:-self-hosted}" != github-hosted ]; then cached=1; fi ;;
esac
# flock serialises two jobs building one version on a machine (util-linux; none on macOS).
if ! command -v flock > /dev/null; then cached=""; fi
if [ -z "$cached" ]; then
  venv="${RUNNER_TEMP:?}/magi-venv"
  fresh "$venv"
  echo "$venv/bin" >> "$GITHUB_PATH"
  exit 0
fi

# The pinned version: the action's files (not its .git, nor what pip builds in the
# checkout: build/, *.egg-info), its constraints among them, and this Python.
key=$("$python" -I - "$src" <<'PY'
import hashlib, os, sys
root, h = sys.argv[1], hashlib.sha256(sys.version.encode())
skip = {".git", "build", "__pycache__"}
for top, dirs, files in os.walk(root):  # dirs pruned and sorted in place: one order
    dirs[:] = sorted(d for d in dirs if d not in skip and not d.endswith(".egg-info"))
    for name in sorted(files):
        path = os.path.join(top, name)
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as f:
                h.update(os.path.relpath(path, root).encode() + b"\0" + hashlib.file_digest(f, "sha256").digest())
print(h.hexdigest()[:32])
PY
)
cache="${MAGI_ACTION_CACHE:-$HOME/.cache/magi-action}"
mkdir -p "$cache"
chmod 700 "$cache"
here="$cache/$key"
exec 9> "$cache/$key.lock"
flock 9 # one build per version; a job that waited uses what the first built
if [ ! -f "$here/manifest" ]; then
  rm -rf "$here"
  mkdir -p "$here"
  fresh "$here/venv"
  manifest "$here/venv" > "$here/manifest.new"
  chmod -R a-w "$here/venv"
  mv "$here/manifest.new" "$here/manifest"
  chmod a-w "$here/manifest" "$here"
  echo "magi: built the cached environment $here"
fi
flock -u 9
if ! diff -q "$here/manifest" <(manifest "$here/venv") > /dev/null; then
  changed=$( { diff "$here/manifest" <(manifest "$here/venv") || true; } \
    | awk '/^[<>]/ {print $4}' | sort -u | head -n 5 | tr '\n' ' ')
  echo "::error::magi's cached environment $here differs from the digests written when it was built (${changed% }): refused. Something wrote to it; find out what, then delete it (chmod -R u+w $here && rm -rf $here) and the next job builds it again" >&2
  exit 1
fi
echo "magi: the cached environment $here, every file checked against its digest"
# A read-only tree checked file by file: nothing may add a compiled module to it later.
echo "PYTHONDONTWRITEBYTECODE=1" >> "${GITHUB_ENV:?}"
echo "$here/venv/bin" >> "$GITHUB_PATH"
