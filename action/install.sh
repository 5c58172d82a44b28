#!/usr/bin/env bash
# Installs magi from this action's own checkout into a virtualenv under RUNNER_TEMP. magi
# itself comes from the action's commit (the pin); its dependencies are resolved from the
# package index, each held to the version constraints.txt names.
set -euo pipefail
python="${MAGI_PYTHON:-python3}"
# magi needs Python 3.11; an older one fails later in pip's resolver, in words about
# platformdirs that name neither Python nor the fix.
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  found=$("$python" -c 'import platform; print(platform.python_version())' 2>/dev/null || echo "not runnable")
  echo "::error::magi needs Python >= 3.11; $python is $found: put one first on the runner's PATH as python3 (the runner directory's .path file, then restart the runner)" >&2
  exit 1
fi
venv="${RUNNER_TEMP:?}/magi-venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
  -c "$GITHUB_ACTION_PATH/constraints.txt" "$GITHUB_ACTION_PATH[github]"
echo "$venv/bin" >> "$GITHUB_PATH"
