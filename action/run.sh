#!/usr/bin/env bash
# Turns the action's inputs (environment variables, never template text) into argv.
# The token is never an argument: publish reads it from MAGI_GITHUB_TOKEN itself, and
# compete refuses to start when one is set. admit reads the event GitHub wrote to disk.
set -euo pipefail
args=(action "${MAGI_ACTION_COMMAND:?command is required (receive, admit, claim, merge, compete, publish, land, rebase, ...)}")
case "$MAGI_ACTION_COMMAND" in
  compete|council|review|land)
    # An agent can read /proc/<pid>/environ of every process in its job: the App's key,
    # which seals magi's markers, is never given to a job that runs agents.
    if [ -n "${MAGI_MARKER_KEY:-}" ]; then
      echo "::error::$MAGI_ACTION_COMMAND runs agents: it must not be given app-key" >&2
      exit 2
    fi
    unset MAGI_MARKER_KEY
    ;;
esac
case "$MAGI_ACTION_COMMAND" in
  compete)
    if [ -n "${MAGI_GITHUB_TOKEN:-}" ]; then
      echo "::error::compete runs agents: it must not be given a token" >&2
      exit 2
    fi
    unset MAGI_GITHUB_TOKEN
    args+=(--issue "${MAGI_ISSUE:?issue is required}")
    [ -n "${MAGI_ISSUE_FILE:-}" ] && args+=(--issue-file "$MAGI_ISSUE_FILE")
    [ -n "${MAGI_RUN:-}" ] && args+=(--run-id "$MAGI_RUN")
    [ -n "${MAGI_ARTIFACT_DIR:-}" ] && args+=(--artifact-dir "$MAGI_ARTIFACT_DIR")
    # A writer's /magi answer: its words are read from the issue's comments, never an input.
    [ -n "${MAGI_COMMENT:-}" ] && args+=(--answer-comment "$MAGI_COMMENT")
    # A forked wave's seat job (docs/fan-out.md): only the seats of this job's labels.
    [ "${MAGI_STAGE:-}" = fork ] && args+=(--fork)
    ;;
  council|review)
    if [ -n "${MAGI_GITHUB_TOKEN:-}" ]; then
      echo "::error::$MAGI_ACTION_COMMAND runs agents: it must not be given a token" >&2
      exit 2
    fi
    unset MAGI_GITHUB_TOKEN
    args=(action council --command "$MAGI_ACTION_COMMAND" --issue "${MAGI_ISSUE:?issue is required}")
    args+=(--comment "${MAGI_COMMENT:?comment is required}" --input-dir "${MAGI_INPUT_DIR:?input-dir is required}")
    [ -n "${MAGI_ARTIFACT_DIR:-}" ] && args+=(--artifact-dir "$MAGI_ARTIFACT_DIR")
    ;;
  publish-council|publish-review)
    if [ -z "${MAGI_GITHUB_TOKEN:-}" ]; then
      echo "::error::$MAGI_ACTION_COMMAND needs an App installation token (input token)" >&2
      exit 2
    fi
    args=(action publish-council --command "${MAGI_ACTION_COMMAND#publish-}" --issue "${MAGI_ISSUE:?issue is required}")
    args+=(--comment "${MAGI_COMMENT:?comment is required}" --input-dir "${MAGI_INPUT_DIR:?input-dir is required}")
    [ -n "${MAGI_ARTIFACT_DIR:-}" ] && args+=(--artifact-dir "$MAGI_ARTIFACT_DIR")
    ;;
  claim)
    # Without the App: the claim ref, with the App token (no agent runs in this job).
    if [ -z "${MAGI_GITHUB_TOKEN:-}" ]; then
      echo "::error::claim needs an App installation token (input token)" >&2
      exit 2
    fi
    args+=(--issue "${MAGI_ISSUE:?issue is required}" --event-file "${GITHUB_EVENT_PATH:?}")
    ;;
  pin)
    # The issue text the label pinned in the claim: the job's read token, the App's key.
    if [ -z "${MAGI_GITHUB_TOKEN:-}" ]; then
      echo "::error::pin needs the job's read token (input token)" >&2
      exit 2
    fi
    args+=(--issue "${MAGI_ISSUE:?issue is required}" --issue-file "${MAGI_ISSUE_FILE:?issue-file is required}")
    ;;
  merge)
    # Without the App: the merge gate, with the App token (no agent runs in this job).
    if [ -z "${MAGI_GITHUB_TOKEN:-}" ]; then
      echo "::error::merge needs an App installation token (input token)" >&2
      exit 2
    fi
    : "${MAGI_APP_SLUG:?app-slug is required: the app-slug output of the App token step}"
    args+=(--event-name "${GITHUB_EVENT_NAME:?}" --event-file "${GITHUB_EVENT_PATH:?}")
    ;;
  receive)
    # Without a receiver: the App's own handlers on this run's event (magi.app.serverless),
    # with the App token (no agent runs in this job). The token and the key stay in the env.
    if [ -z "${MAGI_GITHUB_TOKEN:-}" ]; then
      echo "::error::receive needs an App installation token (input token)" >&2
      exit 2
    fi
    : "${MAGI_APP_SLUG:?app-slug is required: the app-slug output of the App token step}"
    args=(receive --event-name "${GITHUB_EVENT_NAME:?}" --event-file "${GITHUB_EVENT_PATH:?}")
    ;;
  admit)
    args+=(--event-name "${GITHUB_EVENT_NAME:?}" --event-file "${GITHUB_EVENT_PATH:?}")
    [ -n "${MAGI_PERMISSION:-}" ] && args+=(--permission "$MAGI_PERMISSION")
    [ -n "${MAGI_ISSUE_FILE:-}" ] && args+=(--comments-file "$MAGI_ISSUE_FILE")
    ;;
  notify)
    # A notifier can read its parent's /proc/<pid>/environ: this step holds nothing secret.
    if [ -n "${MAGI_GITHUB_TOKEN:-}" ] || [ -n "${MAGI_MARKER_KEY:-}" ]; then
      echo "::error::notify runs the repository's notifier: it must not be given a token or app-key" >&2
      exit 2
    fi
    unset MAGI_GITHUB_TOKEN MAGI_MARKER_KEY
    args+=(--issue "${MAGI_ISSUE:?issue is required}")
    [ -n "${MAGI_RUN:-}" ] && args+=(--run "$MAGI_RUN")
    [ -n "${MAGI_ARTIFACT_DIR:-}" ] && args+=(--artifact-dir "$MAGI_ARTIFACT_DIR")
    [ -n "${MAGI_PR:-}" ] && args+=(--pr "$MAGI_PR")
    ;;
  publish)
    if [ -z "${MAGI_GITHUB_TOKEN:-}" ]; then
      echo "::error::publish needs an App installation token (input token)" >&2
      exit 2
    fi
    args+=(--issue "${MAGI_ISSUE:?issue is required}")
    [ -n "${MAGI_RUN:-}" ] && args+=(--run "$MAGI_RUN")
    [ -n "${MAGI_ARTIFACT_DIR:-}" ] && args+=(--artifact-dir "$MAGI_ARTIFACT_DIR")
    ;;
  land)
    # The landing fix round runs agents: like compete, it must hold no token.
    if [ -n "${MAGI_GITHUB_TOKEN:-}" ]; then
      echo "::error::land runs agents: it must not be given a token" >&2
      exit 2
    fi
    unset MAGI_GITHUB_TOKEN
    args+=(--pr "${MAGI_PR:?pr is required}" --input "${MAGI_INPUT_FILE:?input-file is required}")
    [ -n "${MAGI_ROUND:-}" ] && args+=(--round "$MAGI_ROUND")
    [ -n "${MAGI_RECORD:-}" ] && args+=(--record "$MAGI_RECORD")
    [ -n "${MAGI_ARTIFACT_DIR:-}" ] && args+=(--artifact-dir "$MAGI_ARTIFACT_DIR")
    ;;
  land-read)
    # The landing read step: the job's read-only GITHUB_TOKEN (for the job log tails), no agents.
    args+=(--pr "${MAGI_PR:?pr is required}" --raw "${MAGI_INPUT_DIR:?input-dir is required}")
    args+=(--out "${MAGI_INPUT_FILE:?input-file is required}")
    [ -n "${MAGI_GITHUB_TOKEN:-}" ] && args+=(--fetch-logs)
    ;;
  publish-land|rebase)
    if [ -z "${MAGI_GITHUB_TOKEN:-}" ]; then
      echo "::error::$MAGI_ACTION_COMMAND needs an App installation token (input token)" >&2
      exit 2
    fi
    args+=(--pr "${MAGI_PR:?pr is required}")
    if [ "$MAGI_ACTION_COMMAND" = publish-land ] && [ -n "${MAGI_ARTIFACT_DIR:-}" ]; then
      args+=(--artifact-dir "$MAGI_ARTIFACT_DIR")
    fi
    ;;
  token-refused)
    # After create-github-app-token failed: why, asked with the App's key; said on the
    # thread with the job's own GITHUB_TOKEN (issues: write). No agent runs in this job.
    if [ -z "${MAGI_GITHUB_TOKEN:-}" ]; then
      echo "::error::token-refused needs the job's own GITHUB_TOKEN (input token)" >&2
      exit 2
    fi
    args+=(--thread "${MAGI_ISSUE:-}")
    ;;
  *)
    echo "::error::unknown command '$MAGI_ACTION_COMMAND' (receive, admit, claim, merge, compete, publish, council, review, publish-council, publish-review, land-read, land, publish-land, rebase, token-refused)" >&2
    exit 2
    ;;
esac
exec magi "${args[@]}"
