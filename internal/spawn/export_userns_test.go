package spawn

// NSProbes is how many times d probed whether user namespaces work here
// (nsAnswer).
func NSProbes(d *Dispatcher) int { return d.ns.probeCount() }
