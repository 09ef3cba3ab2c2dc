package interactive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestResumePrefixAmongMine (review sealrest P3-5): brood --resume PREFIX
// resolves among the user's own sessions, as brood run --resume does: a
// shipped session sharing the prefix neither makes it ambiguous nor wins;
// a prefix only a shipped one has is refused naming it.
func TestResumePrefixAmongMine(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	root := t.TempDir()
	dir := taskdir.Open(root).SessionsDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mine, shipped := "01m9aaaa0000000000000000mine", "01m9aaaa0000000000000000ship"
	if err := session.Claim(filepath.Join(dir, mine+".jsonl"), ""); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{mine, shipped} {
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		q, want, err string
	}{
		{"01M9AAAA", mine, ""},
		{shipped, "", "was not made by you"},
	} {
		id, err := resumeID(root, tc.q)
		if id != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("resumeID(%q) = %q, %v; want %q, %q", tc.q, id, err, tc.want, tc.err)
		}
	}
}
