"""The competition's rules: blinding, packets, prompts, edited tests, reach and the tally."""
