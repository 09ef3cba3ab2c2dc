package trust_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/trust"
)

// TestGrantFilesNamesChanges: a grant keeps each file's sum, so a listing
// names what changed, was added or went away since.
func TestGrantFilesNamesChanges(t *testing.T) {
	s := trust.Store{Path: filepath.Join(t.TempDir(), "trust.json")}
	files := []trust.File{{Rel: "a", Data: []byte("1")}, {Rel: "scripts/guard.sh", Data: []byte("echo guard")}, {Rel: "gone", Data: nil}}
	if err := s.GrantFiles("/p", files, time.Now()); err != nil {
		t.Fatal(err)
	}
	recs, err := s.List()
	if err != nil || len(recs) != 1 || recs[0].Hash != trust.Hash(files) || !s.Trusted("/p", trust.Hash(files)) {
		t.Fatalf("records %+v %v", recs, err)
	}
	now := []trust.File{{Rel: "a", Data: []byte("1")}, {Rel: "scripts/guard.sh", Data: []byte("echo PWNED")}, {Rel: "new", Data: nil}}
	if got := recs[0].Changed(now); !slices.Equal(got, []string{"gone", "new", "scripts/guard.sh"}) {
		t.Errorf("Changed = %q", got)
	}
	if got := recs[0].Changed(files); len(got) != 0 {
		t.Errorf("unchanged: %q", got)
	}
	if got := (trust.Record{}).Changed(now); got != nil {
		t.Errorf("an older record without sums names %q", got)
	}
}
