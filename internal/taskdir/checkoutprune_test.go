package taskdir

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestSetAsideRecordsArePruned (review38): a checkout made anew at one
// path again and again (a CI job's fresh clone) sets the one before's
// records aside each time; they are pruned as more are set aside: beyond
// the keepSetAside newest, and any set aside over setAsideAge ago. None
// whose lock a brood holds, nor a checkout's own directory (one whose
// checkout moved away, which takeOver may still want), nor the checkout's
// records now, and what a prune that died left goes.
func TestSetAsideRecordsArePruned(t *testing.T) {
	for _, tc := range []struct {
		name   string
		clones int
		hold   int           // the set-aside (oldest first) whose sent.lock a brood holds: -1 none
		later  time.Duration // a prune run this much later, after the clones
		left   []int         // the set-asides left (oldest first)
	}{
		{"a few are kept", 3, -1, 0, []int{0, 1, 2}},
		{"beyond the newest", keepSetAside + 3, -1, 0, seq(3, keepSetAside+3)},
		{"a held one is kept", keepSetAside + 3, 1, 0, append([]int{1}, seq(3, keepSetAside+3)...)},
		{"old ones go", 3, -1, setAsideAge + time.Hour, nil},
		{"old, but held", 3, 2, setAsideAge + time.Hour, []int{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ownStateHome(t)
			top, err := filepath.EvalSymlinks(t.TempDir())
			must(t, err)
			// Another checkout, moved away: its own directory, never set aside.
			moved := plantNote(t, "moved", filepath.Join(top, "gone", ".git"), &DirID{FS: 1, Ino: 2, Birth: 3})
			common := filepath.Join(top, "a", ".git")
			checkouts := filepath.Dir(CheckoutState(common))
			must(t, os.Mkdir(filepath.Join(checkouts, pruning+"0123"), 0o700)) // what a prune that died left
			var ids []DirID
			var unlock func()
			for i := range tc.clones + 1 {
				must(t, os.RemoveAll(filepath.Join(top, "a")))
				must(t, os.MkdirAll(common, 0o755))
				id, ok := DirIdentity(common)
				if !ok {
					t.Skip("this file system keeps no birth time")
				}
				dir := CheckoutDir(common)
				must(t, WriteStateJSON(filepath.Join(dir, "fleet", "K", "landed.json"), i))
				if i == tc.hold {
					u, err := LockStateFile(t.Context(), filepath.Join(dir, "fleet", "K", "sent.lock"))
					must(t, err)
					unlock = u
				}
				ids = append(ids, id)
			}
			if unlock != nil {
				defer unlock()
			}
			if tc.later > 0 {
				pruneSetAside(checkouts, time.Now().Add(tc.later)) // as a set-aside then would
			}
			var left []int
			ents, err := os.ReadDir(checkouts)
			must(t, err)
			for _, e := range ents {
				if _, ok := setAsideAt(e.Name()); ok {
					var n checkoutNote
					must(t, ReadStateJSON(filepath.Join(checkouts, e.Name(), checkoutNoteFile), maxNote, &n))
					left = append(left, slices.Index(ids, *n.ID))
				}
				if e.Name() == pruning+"0123" {
					t.Errorf("what a dead prune left is still there")
				}
			}
			slices.Sort(left)
			if !slices.Equal(left, tc.left) {
				t.Errorf("set-asides left %v; want %v", left, tc.left)
			}
			var now int
			if err := ReadStateJSON(filepath.Join(CheckoutDir(common), "fleet", "K", "landed.json"), 64, &now); err != nil || now != tc.clones {
				t.Errorf("the checkout's own record: %d, %v; want %d", now, err, tc.clones)
			}
			if err := CheckStateDir(moved); err != nil {
				t.Errorf("a moved checkout's own directory: %v; want it kept", err)
			}
		})
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}
