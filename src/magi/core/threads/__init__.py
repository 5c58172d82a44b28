"""What magi reads and writes in GitHub threads: the posting gate, markers, commands, merge gate
and landing decisions."""
