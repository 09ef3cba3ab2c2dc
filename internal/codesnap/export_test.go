package codesnap

// KeptStamps is how many of the directories of snap's verified checkout
// in c have a stamp kept (statplan.go), and how many it has.
func KeptStamps(c *Cache, snap *Snapshot) (kept, dirs int) {
	v, ok := c.verified.Load(lowerKey(snap))
	if !ok || v.(*lower).plan == nil {
		return 0, 0
	}
	p := v.(*lower).plan
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.read {
		if s != (dirStamp{}) {
			kept++
		}
	}
	return kept, len(p.read)
}

// Guarded reports whether snap's verified checkout in c has a quiet guard
// (guard.go): its next use checks no file.
func Guarded(c *Cache, snap *Snapshot) bool {
	v, ok := c.verified.Load(lowerKey(snap))
	if !ok {
		return false
	}
	l := v.(*lower)
	l.gmu.Lock()
	defer l.gmu.Unlock()
	return l.guard.quiet()
}
