package trust

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRestoreThroughLinkedParent: a top swapped for a link to outside is
// put back as a directory and the link's target is not written.
func TestRestoreThroughLinkedParent(t *testing.T) {
	root := t.TempDir()
	out := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git", "info"), 0o755)
	os.WriteFile(filepath.Join(root, ".git", "info", "exclude"), []byte("orig\n"), 0o644)
	os.WriteFile(filepath.Join(out, "exclude"), []byte("USER'S FILE OUTSIDE\n"), 0o644)
	c, err := SnapshotPaths(root, []string{".git/info"})
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := c.Record()
	os.RemoveAll(filepath.Join(root, ".git", "info"))
	os.Symlink(out, filepath.Join(root, ".git", "info"))
	c2, err := FromRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c2.Changes()
	t.Logf("changes %v %v", ch, err)
	f, err := c2.Restore(ch)
	t.Logf("restore failed=%v err=%v", f, err)
	b, err := os.ReadFile(filepath.Join(out, "exclude"))
	t.Logf("outside file now: %q %v", b, err)
	if err != nil || string(b) != "USER'S FILE OUTSIDE\n" {
		t.Errorf("restore touched a file outside the tree")
	}
}
