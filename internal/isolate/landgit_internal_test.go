package isolate

import (
	"strings"
	"testing"
)

// TestLandGitNeverReadsAHeldCopysIndex: a worktree copy whose writer
// wrote its git dir (HoldGit) is landed only from the parent's own copy
// of its index; without one the landing fails, never falling back to the
// index the child could write.
func TestLandGitNeverReadsAHeldCopysIndex(t *testing.T) {
	w := &Workspace{Root: t.TempDir(), gitHeld: true}
	_, err := w.landGit(t.Context(), "status")
	if err == nil || !strings.Contains(err.Error(), "nothing landed") {
		t.Fatalf("landGit on a held copy with no index of the parent's: %v, want a refusal", err)
	}
}
