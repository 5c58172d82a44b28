"""Edited tests: existing test files that lost lines are found, new tests are not."""

from __future__ import annotations

from magi.core.compete.edited_tests import MAX_LINES, describe, edited_tests, is_test_path
from magi.model.config import DEFAULT_TESTS

DIFF = """\
diff --git a/tests/test_stats.py b/tests/test_stats.py
index 1111111..2222222 100644
--- a/tests/test_stats.py
+++ b/tests/test_stats.py
@@ -3,2 +3,0 @@ def test_ok():
-def test_words():
-    assert word_count("a  b") == 2
diff --git a/src/stats.py b/src/stats.py
index 3333333..4444444 100644
--- a/src/stats.py
+++ b/src/stats.py
@@ -1 +1 @@
-def word_count(t): return 0
+def word_count(t): return len(t.split())
diff --git a/web/app.spec.ts b/web/app.spec.ts
deleted file mode 100644
index 5555555..0000000
--- a/web/app.spec.ts
+++ /dev/null
@@ -1 +0,0 @@
-it("works", () => expect(1).toBe(1))
"""


def test_test_paths_follow_the_default_patterns() -> None:
    """Directories at any depth and the usual name shapes; ordinary sources are not tests."""
    for path in (
        "tests/a.py",
        "pkg/tests/a.py",
        "test/a.c",
        "a_test.go",
        "test_a.py",
        "web/x.test.js",
        "web/x.spec.ts",
    ):
        assert is_test_path(path, DEFAULT_TESTS), path
    for path in ("src/stats.py", "attest.py", "contest/a.py", "testing.md"):
        assert not is_test_path(path, DEFAULT_TESTS), path


def test_removed_lines_and_deleted_test_files_are_found_with_the_lines() -> None:
    """Both the weakened test file and the deleted spec are flagged; the source edit is not."""
    found = edited_tests(DIFF, DEFAULT_TESTS)
    assert [e.path for e in found] == ["tests/test_stats.py", "web/app.spec.ts"]
    first, second = found
    assert first.removed == ("def test_words():", '    assert word_count("a  b") == 2')
    assert (first.count, first.deleted) == (2, False)
    assert second.deleted
    assert second.count == 1


def test_a_test_file_moved_out_of_the_tests_counts_as_deleted() -> None:
    """A rename to a path no test runner collects removes the test as surely as rm."""
    diff = (
        "diff --git a/tests/test_x.py b/attic/x.py\n"
        "similarity index 100%\nrename from tests/test_x.py\nrename to attic/x.py\n"
    )
    [edit] = edited_tests(diff, DEFAULT_TESTS)
    assert edit.path == "tests/test_x.py"
    assert edit.deleted


def test_patterns_come_from_the_config() -> None:
    """With [verify] tests = ["spec/"], only that directory is a test directory."""
    assert edited_tests(DIFF, ["spec/"]) == []


def test_removed_lines_are_capped_but_counted() -> None:
    """A mass deletion keeps the first lines and the full count."""
    lines = "".join(f"-assert {i}\n" for i in range(100))
    head = "diff --git a/tests/t.py b/tests/t.py\n--- a/tests/t.py\n+++ b/tests/t.py\n"
    diff = f"{head}@@ -1,100 +0,0 @@\n{lines}"
    [edit] = edited_tests(diff, DEFAULT_TESTS)
    assert len(edit.removed) == MAX_LINES
    assert edit.count == 100


def test_the_flag_line_names_the_file_and_shows_the_lines() -> None:
    """What a judge reads: the path, how much went, and the lines themselves."""
    text = describe("tests/t.py", ["assert f() == 2"], 1, False)
    assert "tests/t.py" in text
    assert "assert f() == 2" in text
    assert "1 line" in text
