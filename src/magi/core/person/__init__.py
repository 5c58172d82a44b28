"""The person in the loop: an agent's question and its answer, and what a notification says."""
