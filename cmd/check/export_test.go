package check

// TestSnapshots is the producer-state check the package's own tests build
// engines with (set by TestMain: the tree's, cmd.SnapshotCheck).
var TestSnapshots = new(NewSnapshotCheck)
