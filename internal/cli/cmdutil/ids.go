package cmdutil

import "github.com/broodhq/brood/internal/shortid"

// ResolveID finds the one id among known that id names: the id itself, or
// a unique prefix, tail or part of it, in any case (shortid.Resolve, the one rule
// the TUI, the CLI and progress lines share). kind names what the ids are
// ("task", "session").
func ResolveID(kind, id string, known []string) (string, error) {
	return shortid.Resolve(kind, id, known)
}
