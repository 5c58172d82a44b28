#!/usr/bin/env bash
# Installs magi from this action's own checkout into a virtualenv under RUNNER_TEMP,
# with the pinned constraints. The action's commit is the pin; nothing is fetched by name.
set -euo pipefail
venv="${RUNNER_TEMP:?}/magi-venv"
"${MAGI_PYTHON:-python3}" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
  -c "$GITHUB_ACTION_PATH/constraints.txt" "$GITHUB_ACTION_PATH[github]"
echo "$venv/bin" >> "$GITHUB_PATH"
