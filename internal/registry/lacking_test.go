package registry

import (
	"slices"
	"strings"
	"testing"
)

// TestLackingAndRoster: the tools a file names that brood lacks are kept on
// the definition; an agent left with no usable tool is not in the roster.
func TestLackingAndRoster(t *testing.T) {
	d, _ := Parse("r.md", []byte("---\nname: researcher\ndescription: looks things up\ntools: Read, WebFetch, WebSearch(domain:x.org), TodoWrite\n---\nYou research.\n"), SourceProject)
	if d == nil || !slices.Equal(d.Lacking, []string{"TodoWrite"}) {
		t.Fatalf("lacking = %v", d)
	}
	w, _ := Parse("w.md", []byte("---\nname: webonly\ndescription: only web\ntools: TodoWrite\n---\nYou browse.\n"), SourceProject)
	if w == nil || !w.Unresolvable {
		t.Fatalf("webonly: %+v", w)
	}
	reg := &Registry{sorted: []*Definition{d, w}}
	roster := reg.Roster()
	if !strings.Contains(roster, "- researcher:") || strings.Contains(roster, "webonly") {
		t.Errorf("roster:\n%s", roster)
	}
}
