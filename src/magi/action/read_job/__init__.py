"""The read job: what a landing fix round starts from, fetched with a read-only token."""
