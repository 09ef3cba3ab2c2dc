package sandbox

import "os"

// Layer is a Landlock ruleset built once and applied to many children as
// a domain layer of its own: it handles reading files only and allows it
// everywhere but beneath its paths (BuildLayer). A child's domain is
// then this layer and its own policy's; Landlock allows a path only
// where every layer does, and a child's children inherit both.
type Layer struct {
	f     *os.File
	paths []string
}

// Paths are the paths the layer hides.
func (l *Layer) Paths() []string {
	if l == nil {
		return nil
	}
	return l.paths
}

// Close releases the ruleset (children already under it keep it).
func (l *Layer) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	return l.f.Close()
}
