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
