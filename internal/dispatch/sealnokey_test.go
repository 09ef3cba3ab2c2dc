package dispatch

import (
	"testing"

	"github.com/broodhq/brood/internal/taskdir"
)

// TestSealWithoutStateDirRunsTheTask: with no state directory a record key
// can be made in (a read-only HOME; here a path under a file, which even
// root cannot make), sealing an owner record leaves it unsealed instead of
// failing the delegation (review43 P2-2: every Task call failed).
func TestSealWithoutStateDirRunsTheTask(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/dev/null/state")
	t.Setenv("HOME", "/dev/null/home")
	if _, err := taskdir.RecordKey(); err == nil {
		t.Fatal("a record key was made under /dev/null: the test proves nothing")
	}
	root := t.TempDir()
	if err := taskdir.Open(root).Ensure(); err != nil {
		t.Fatal(err)
	}
	r := taskdir.Open(root).Records()
	if !r.Sealed() {
		t.Fatal("the project's own records are not sealed ones")
	}
	o := &Owner{TaskID: "01M96TEST0000000000000000A", Agent: "explore", Brief: "look"}
	if err := SealOwner(r, o); err != nil || o.Seal != "" {
		t.Errorf("SealOwner = %v, seal %q; want the record unsealed and no error", err, o.Seal)
	}
}
