"""The publish jobs: an artifact onto GitHub with the App token, and the rebase. No agent runs
here; every text passes the posting gate, and every marker is sealed."""
