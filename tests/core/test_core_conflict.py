"""The conflict hand-off's pure parts: git merge-tree's output read, markers found."""

from __future__ import annotations

import pytest

from magi.core.threads.conflict import left_markers, read_merge_tree

TREE = "50dd389ee9dbb673e097205e0456be7caf91548f"


def test_a_conflicting_merge_tree_names_the_paths_and_gits_words():
    said = "Auto-merging a.txt\nCONFLICT (content): Merge conflict in a.txt"
    out = f"{TREE}\na.txt\nb c.txt\n\n{said}\n"
    m = read_merge_tree(out)
    assert (m.tree, m.paths, m.clean) == (TREE, ("a.txt", "b c.txt"), False)
    assert m.said == said


def test_a_clean_merge_tree_is_the_tree_alone():
    m = read_merge_tree(f"{TREE}\n")
    assert (m.tree, m.paths, m.said, m.clean) == (TREE, (), "", True)


def test_output_without_a_tree_id_is_refused_by_name():
    with pytest.raises(ValueError, match="git merge-tree gave no tree id"):
        read_merge_tree("fatal: not something we can merge\n")


def test_markers_left_are_found_by_line():
    text = "a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> main\nb\n"
    assert left_markers(text) == [2, 4, 6]
    assert left_markers("<<<<<<<\n|||||||  base\n=======\r\n>>>>>>>\n") == [1, 2, 3, 4]


def test_lookalikes_are_not_markers():
    """A rule of '=' in a README, or eight '<', is text a resolution may keep."""
    assert left_markers("Title\n========\n<<<<<<<<\n a <<<<<<< b\n=======x\n") == []
