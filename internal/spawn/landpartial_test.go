package spawn

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/isolate"
)

// TestPartlyAppliedIsItsOwnState (review20 L3): a landing that failed
// partway and could not put back all it wrote is neither applied nor
// not-applied (part of it is in the tree): its patch state is
// partly-applied, and its error names what was left and where the earlier
// versions are.
func TestPartlyAppliedIsItsOwnState(t *testing.T) {
	cases := []struct {
		name string
		o    isolate.Outcome
		want string
	}{
		{"applied", isolate.Outcome{Applied: true, Files: []string{"a.txt"}}, call.PatchApplied},
		{"conflict, nothing written", isolate.Outcome{Files: []string{"a.txt"}, Conflict: "error: patch failed"}, call.PatchNotApplied},
		{"failed partway, put back", isolate.Outcome{Files: []string{"a.txt", "d/n.txt"}, Conflict: "git apply failed partway (...); the 1 file(s) it had written were put back"}, call.PatchNotApplied},
		{"failed partway, not put back", isolate.Outcome{Files: []string{"a.txt", "d/n.txt"}, Conflict: "git apply failed partway",
			Partial: []string{"a.txt: permission denied"}, Preimages: "/s/before-landing-1", Patch: "/s/changes.patch"}, call.PatchPartlyApplied},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, _ := patchView(&c.o); got != c.want {
				t.Errorf("patch state %q; want %q", got, c.want)
			}
			if c.want != call.PatchPartlyApplied {
				return
			}
			e := partlyApplied(&c.o)
			for _, w := range []string{"a.txt: permission denied", "/s/before-landing-1", "/s/changes.patch", "only in part"} {
				if !strings.Contains(e, w) {
					t.Errorf("the error does not say %q: %s", w, e)
				}
			}
		})
	}
}
