package trust

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPacksCheck: a pack freshened (its times moved, its content not) is
// no change; one rewritten in place with another content is (review 15
// C5), and a changed reverse index is removed; a multi-pack index made
// since is removed; a pack made since is handed to the caller to verify.
func TestPacksCheck(t *testing.T) {
	top := t.TempDir()
	gitOut(t, top, "init", "-q")
	if err := os.WriteFile(filepath.Join(top, "build.sh"), []byte("echo build\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitOut(t, top, "add", ".")
	gitOut(t, top, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "i")
	gitOut(t, top, "-c", "pack.writeReverseIndex=true", "repack", "-adq")
	dir := filepath.Join(top, ".git", "objects", "pack")
	find := func(ext string) string {
		m, _ := filepath.Glob(filepath.Join(dir, "pack-*"+ext))
		if len(m) != 1 {
			t.Fatalf("pack-*%s: %v", ext, m)
		}
		return m[0]
	}
	pack, rev := find(".pack"), find(".rev")
	p := SnapshotPacks(filepath.Join(top, ".git"))
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(pack, later, later); err != nil { // git's freshening
		t.Fatal(err)
	}
	if c := p.Check(); len(c.Changed)+len(c.Removed)+len(c.New) > 0 {
		t.Fatalf("a freshened pack: %+v", c)
	}
	flip := func(path string) {
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0xff
		if err := os.WriteFile(path, b, 0o444); err != nil { // in place: same inode
			t.Fatal(err)
		}
	}
	flip(pack)
	flip(rev)
	midx := filepath.Join(dir, "multi-pack-index")
	if err := os.WriteFile(midx, []byte("MIDX"), 0o444); err != nil {
		t.Fatal(err)
	}
	newIdx := filepath.Join(dir, "pack-"+strings.Repeat("ab", 20)+".idx")
	if err := os.WriteFile(newIdx, []byte("idx"), 0o444); err != nil {
		t.Fatal(err)
	}
	// git reads any *.idx, not only pack-*.idx (review18 R2).
	evilIdx := filepath.Join(dir, "evil.idx")
	if err := os.WriteFile(evilIdx, []byte("idx"), 0o444); err != nil {
		t.Fatal(err)
	}
	c := p.Check()
	rel := func(abs string) string { return "objects/pack/" + filepath.Base(abs) }
	if want := []string{rel(pack), rel(rev)}; !slices.Equal(c.Changed, want) {
		t.Errorf("Changed = %v, want %v", c.Changed, want)
	}
	if want := []string{rel(rev)}; !slices.Equal(c.Removed, want) {
		t.Errorf("Removed = %v, want %v", c.Removed, want)
	}
	if want := []string{rel(evilIdx), rel(newIdx)}; !slices.Equal(c.New, want) {
		t.Errorf("New = %v, want %v", c.New, want)
	}
	for _, gone := range []string{rev, midx} {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("%s is still there", gone)
		}
	}
	if _, err := os.Lstat(pack); err != nil {
		t.Errorf("the pack itself was removed: %v", err)
	}
}
