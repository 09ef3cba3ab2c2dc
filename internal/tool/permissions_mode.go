package tool

// WithMode returns a copy of p under mode m, its rules unchanged: the
// interactive mode's Shift+Tab switches the root agent's mode this way.
func (p *Permissions) WithMode(m Mode) *Permissions {
	if p == nil {
		return nil
	}
	q := *p
	q.mode = m
	return &q
}
