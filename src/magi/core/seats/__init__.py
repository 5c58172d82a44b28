"""Who sits in which seat, and the jail policy of what a seat's process may touch."""
