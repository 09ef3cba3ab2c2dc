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

// TestTrustsPin: a pin is trusted when the grant has its file with the
// pinned content — whatever the file holds now.
func TestTrustsPin(t *testing.T) {
	root := t.TempDir()
	guard := filepath.Join(root, "scripts", "guard.sh")
	writeFile(t, guard, "echo guard\n")
	g := trust.GrantOf([]trust.File{{Rel: "scripts/guard.sh", Data: []byte("echo guard\n")}})
	pin := trust.PinFiles([]string{guard}, nil)[0]
	writeFile(t, guard, "echo PWNED\n") // after the pin: the pin's content is what runs or not
	for _, tc := range []struct {
		name string
		g    *trust.Grant
		pin  trust.Pin
		want bool
	}{
		{"pinned as granted", g, pin, true},
		{"pinned otherwise", g, trust.PinFiles([]string{guard}, nil)[0], false},
		{"absent", g, trust.Pin{Path: guard}, false},
		{"not in the grant", g, trust.Pin{Path: filepath.Join(root, "other.sh"), Sum: pin.Sum}, false},
		{"outside the root", &trust.Grant{All: true}, trust.Pin{Path: "/etc/passwd", Sum: "x"}, false},
		{"all", &trust.Grant{All: true}, trust.Pin{Path: guard, Sum: "x"}, true},
		{"nil grant", nil, pin, false},
	} {
		if got := tc.g.TrustsPin(root, tc.pin); got != tc.want {
			t.Errorf("%s: TrustsPin = %v, want %v", tc.name, got, tc.want)
		}
	}
}
