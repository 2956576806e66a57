package edit

// LockHolder is who holds a log directory's .lock (BrokerLock).
type LockHolder struct {
	// Pid is the holder's process id, as the kernel reports it: a broker's
	// (a JVM takes a classic fcntl lock), -1 for an open-file-description
	// lock (the kind kseg takes on Linux), 0 when unknown (an flock(2)
	// lock names no process).
	Pid int
	// Kind is LockFcntl (what Kafka's FileChannel.tryLock takes, and
	// kseg) or LockFlock (flock(2): flock(1) in a wrapper script, another
	// tool).
	Kind string
}

// Lock kinds a LockHolder holds.
const (
	LockFcntl = "fcntl"
	LockFlock = "flock"
)

// refuseHeld is the refusal for a .lock that h holds.
func refuseHeld(lockPath string, h LockHolder) error {
	switch {
	case h.Kind == LockFlock:
		return Refuse(RefuseLocked, lockPath, "another process holds an flock(2) lock on the log directory lock (flock(1) in a wrapper script, or another tool): it is in use; find it (fuser -v %s) and stop it first", lockPath)
	case h.Pid <= 0:
		// F_OFD_GETLK reports -1 for an open-file-description lock: the
		// kind kseg takes on Linux (a JVM takes a classic one, with its
		// pid).
		return Refuse(RefuseLocked, lockPath, "another kseg run (or a process using open-file-description locks) holds the log directory lock; wait for it to finish")
	}
	return Refuse(RefuseLocked, lockPath, "process %d holds the log directory lock: a broker is running on it; stop it first", h.Pid)
}
