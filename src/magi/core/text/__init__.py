"""Text at magi's edges: cleaning (hidden characters, secrets), caps, and reading replies."""
