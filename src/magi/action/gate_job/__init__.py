"""Without the App: whether an event starts a competition, the claim, and the merge gate."""
