package cmdutil

import (
	"fmt"
	"strings"
)

// ResolveID finds the one id among known that id names: the id itself or a
// unique prefix of it, in any case, with a trailing "…" (as lists print a
// clipped id) ignored. kind names what the ids are ("task", "session").
func ResolveID(kind, id string, known []string) (string, error) {
	want := strings.ToUpper(strings.TrimSuffix(strings.TrimSpace(id), "…"))
	if want == "" {
		return "", fmt.Errorf("empty %s id", kind)
	}
	var hits []string
	for _, k := range known {
		u := strings.ToUpper(k)
		if u == want {
			return k, nil
		}
		if strings.HasPrefix(u, want) {
			hits = append(hits, k)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return "", fmt.Errorf("no %s %s", kind, id)
	}
	if len(hits) > 3 {
		hits = append(hits[:3], "…")
	}
	return "", fmt.Errorf("%s id %s is ambiguous (%s): give more of it", kind, id, strings.Join(hits, ", "))
}
