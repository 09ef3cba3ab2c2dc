package spawn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/trust"
)

// TestSettleLinksWhereOnlyAfterLooked (review22 P2-3): the passes are
// compared only where both looked. A link out of the tree in a directory
// the pass before could not see is named and rejects a done result, but
// is not removed: it may be the user's. One the writer made where both
// looked is removed; a pass after blind anywhere rejects.
func TestSettleLinksWhereOnlyAfterLooked(t *testing.T) {
	locked := []trust.Unseen{{Dir: "locked", Why: "permission denied"}}
	for _, tt := range []struct {
		name          string
		before, after []trust.Unseen
		mineBefore    bool // locked/mine in the pass before
		made          bool // the writer made "made" -> /etc/passwd, seen after
		mineKept      bool
		want          string
	}{
		{"only after looked", locked, nil, false, false, true, "NOT removed (they may be yours): locked/mine -> /usr/share"},
		{"only after looked, and one made", locked, nil, false, true, true, "removed: made -> /etc/passwd"},
		{"both looked", nil, nil, false, false, false, "removed: locked/mine -> /usr/share"},
		{"blind both times", locked, locked, true, false, true, "nor before it"},
		{"blinded", nil, locked, true, false, true, "though they could before it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "locked"), 0o755); err != nil {
				t.Fatal(err)
			}
			links := map[string]string{"locked/mine": "/usr/share"}
			if tt.made {
				links["made"] = "/etc/passwd"
			}
			for link, target := range links {
				if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
					t.Fatal(err)
				}
			}
			after := trust.Nested{Links: links, Unseen: tt.after}
			if len(tt.after) > 0 {
				after.Links = map[string]string{}
			}
			before := isolate.Links{Root: root, Links: map[string]string{}, Unseen: tt.before}
			if tt.mineBefore {
				before.Links["locked/mine"] = "/usr/share"
			}
			g := &configGuard{root: root, walkAfter: &nestedTops{root: root, found: after}}
			j := &job{env: &dispatch.Envelope{TaskID: "t1"}}
			res, v := &dispatch.Result{Status: dispatch.StatusDone}, &dispatch.Verdict{}
			lines := (&Dispatcher{}).settleLinks(j, res, v, dispatch.Expect{Root: root}, []isolate.Links{before}, g)
			text := strings.Join(lines, "\n")
			if _, err := os.Lstat(filepath.Join(root, "locked", "mine")); (err == nil) != tt.mineKept {
				t.Errorf("locked/mine kept: %v, want %v\n%s", err == nil, tt.mineKept, text)
			}
			if _, err := os.Lstat(filepath.Join(root, "made")); tt.made && err == nil {
				t.Errorf("made not removed:\n%s", text)
			}
			if res.Status != dispatch.StatusRejected || v.Accepted || !strings.Contains(text, tt.want) {
				t.Errorf("status %s, lines:\n%s\nwant rejected, saying %q", res.Status, text, tt.want)
			}
		})
	}
}
