package spawn

// NSProbes is how many times d probed whether user namespaces work here
// (nsAnswer).
func NSProbes(d *Dispatcher) int { return d.ns.probeCount() }

// DenyWalks is how many times d's spawns expanded Read deny rules.
func DenyWalks(d *Dispatcher) int64 { return d.denyWalks.Load() }
