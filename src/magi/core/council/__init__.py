"""The council's rules, answer shapes, prompts and phrases, and its surface on GitHub."""
