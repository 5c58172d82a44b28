"""The demo's scratch repository: a small real module with a real failing test."""

from __future__ import annotations

TASK = """\
textstats: make the two failing tests pass.

`word_count` should count words separated by any whitespace (several spaces, tabs,
newlines), and `average_word_length("")` should return 0.0 instead of raising.
Run `python3 -m unittest -q` to check.
"""

BUGGY = '''\
"""Small text statistics."""


def word_count(text: str) -> int:
    """Number of words in ``text``."""
    if not text:
        return 0
    return len(text.split(" "))


def average_word_length(text: str) -> float:
    """Mean length of the words in ``text``."""
    words = text.split()
    return sum(len(w) for w in words) / len(words)
'''

# One right, one partial (fixes one of two bugs), one wrong (breaks what worked).
RIGHT = BUGGY.replace('return len(text.split(" "))', "return len(text.split())").replace(
    "    return sum(len(w) for w in words) / len(words)",
    "    if not words:\n        return 0.0\n    return sum(len(w) for w in words) / len(words)",
)
PARTIAL = BUGGY.replace('return len(text.split(" "))', "return len(text.split())")
WRONG = BUGGY.replace('return len(text.split(" "))', 'return text.count(" ") + 1').replace(
    "    return sum(len(w) for w in words) / len(words)",
    "    return sum(len(w) for w in words) / max(len(words), 1)",
)

TESTS = """\
import unittest

from textstats import average_word_length, word_count


class WordCount(unittest.TestCase):
    def test_single_spaces(self):
        self.assertEqual(word_count("a b c"), 3)

    def test_any_whitespace(self):
        self.assertEqual(word_count("a  b\\tc\\nd"), 4)

    def test_empty(self):
        self.assertEqual(word_count(""), 0)


class AverageWordLength(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(average_word_length("ab abcd"), 3.0)

    def test_empty_text(self):
        self.assertEqual(average_word_length(""), 0.0)


if __name__ == "__main__":
    unittest.main()
"""

FILES = {"textstats.py": BUGGY, "test_textstats.py": TESTS, "README.md": "# textstats\n"}
SOLUTIONS = {"right": RIGHT, "partial": PARTIAL, "wrong": WRONG}
E2E = "python3 -m unittest -q"
