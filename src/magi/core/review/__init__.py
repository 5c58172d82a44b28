"""The winner's review loop and a landing fix round: findings, prompts, the report's sections."""
