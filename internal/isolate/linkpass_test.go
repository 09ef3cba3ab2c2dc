package isolate

import (
	"errors"
	"slices"
	"testing"

	"github.com/broodhq/brood/internal/trust"
)

// TestCompareLinks (review22 P2-3): two link passes are compared only
// where both looked: a link made or retargeted where the pass before
// saw is made; a link where the pass before could not look (a
// directory, or all of the tree) is unseen, never made, whatever its
// target.
func TestCompareLinks(t *testing.T) {
	before := Links{Links: map[string]string{"a": "x", "b": "y", "locked/old": "/usr"}}
	after := Links{Links: map[string]string{"a": "x", "b": "z", "c": "/etc", "locked/old": "/usr", "locked/new": "/etc", "lockedx": "/"}}
	for _, tt := range []struct {
		name          string
		unseen        []trust.Unseen
		made, unseen2 []string
	}{
		{"saw all", nil, []string{"b", "c", "locked/new", "lockedx"}, nil},
		{"a directory unseen", []trust.Unseen{{Dir: "locked", Why: "permission denied"}}, []string{"b", "c", "lockedx"}, []string{"locked/new", "locked/old"}},
		{"all unseen", []trust.Unseen{{Dir: ".", Why: "walk failed"}}, nil, []string{"a", "b", "c", "locked/new", "locked/old", "lockedx"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := before
			b.Unseen = tt.unseen
			made, unseen := CompareLinks(b, after)
			if !slices.Equal(made, tt.made) || !slices.Equal(unseen, tt.unseen2) {
				t.Errorf("CompareLinks = %v, %v; want %v, %v", made, unseen, tt.made, tt.unseen2)
			}
		})
	}
}

// TestLinksWithin: a walk of a tree gives the link pass of a root below
// it, relative to that root, with what it could not see there (an
// unseen directory above the root blinds all of it); a failed walk, or
// a root outside it, gives none (the caller walks the root itself).
func TestLinksWithin(t *testing.T) {
	top := t.TempDir()
	n := trust.Nested{
		Links:  map[string]string{"x": "/a", "proj/y": "/b", "proj/d/z": "/c", "projx/w": "/d"},
		Unseen: []trust.Unseen{{Dir: "proj/d/e", Why: "too long"}, {Dir: "other", Why: "denied"}},
	}
	l, ok := LinksWithin(top+"/proj", top, n, nil)
	if !ok || len(l.Links) != 2 || l.Links["y"] != "/b" || l.Links["d/z"] != "/c" || len(l.Unseen) != 1 || l.Unseen[0].Dir != "d/e" {
		t.Errorf("LinksWithin(proj) = %+v, %v", l, ok)
	}
	if l, ok := LinksWithin(top, top, n, nil); !ok || len(l.Links) != 4 || len(l.Unseen) != 2 {
		t.Errorf("LinksWithin(top) = %+v, %v", l, ok)
	}
	if l, ok := LinksWithin(top+"/other/in", top, n, nil); !ok || l.Sees("anything") {
		t.Errorf("a root below an unseen directory: %+v, %v", l, ok)
	}
	if _, ok := LinksWithin(t.TempDir(), top, n, nil); ok {
		t.Error("a root outside the walk: taken from it")
	}
	if _, ok := LinksWithin(top, top, n, errTest); ok {
		t.Error("a failed walk: taken")
	}
}

var errTest = errors.New("walk failed")
