package spawn

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/trust"
)

// guardBulk names where the bytes of states are, largest first (at most
// three): what a user shrinks when a record is too large to keep (review
// P2-1: submodules' hooks, not .git/hooks, were the bulk).
func guardBulk(states []trust.StateRecord) string {
	size := map[string]int{}
	for _, s := range states {
		for rel, e := range s.Entries {
			size[bulkPlace(rel)] += len(e.Data)
		}
	}
	places := make([]string, 0, len(size))
	for p := range size {
		places = append(places, p)
	}
	slices.SortFunc(places, func(a, b string) int { return cmp.Or(cmp.Compare(size[b], size[a]), strings.Compare(a, b)) })
	var out []string
	for _, p := range places[:min(3, len(places))] {
		out = append(out, fmt.Sprintf("%s (%d KB)", p, (size[p]+1023)/1024))
	}
	return strings.Join(out, ", ")
}

// bulkPlace is the place guardBulk counts rel's bytes under.
func bulkPlace(rel string) string {
	segs := strings.Split(rel, "/")
	i := slices.Index(segs, ".git")
	switch {
	case i < 0:
		return segs[0]
	case i > 0 && segs[0] != "..":
		if slices.Contains(segs[i:], "hooks") {
			return "nested repositories' .git/hooks"
		}
		return "nested repositories' .git"
	case i+1 >= len(segs):
		return ".git"
	case segs[i+1] == "modules" && slices.Contains(segs[i:], "hooks"):
		return ".git/modules/*/hooks"
	case segs[i+1] == "modules":
		return ".git/modules/*"
	}
	return ".git/" + segs[i+1]
}
