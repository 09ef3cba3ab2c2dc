package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHiddenUnreadable: a policy's Hidden paths (a worktree child's view
// of the real tree's ignored files) cannot be read, by the re-exec path
// (the policy in hand) or on a base domain (the list from HiddenEnv), while
// their siblings and the rest of the system can.
func TestHiddenUnreadable(t *testing.T) {
	if landlockABI() == 0 {
		t.Skip("kernel has no Landlock: a worktree child's reads are not held (brood doctor says so)")
	}
	tree := t.TempDir()
	for f, data := range map[string]string{".env": "secret", "ok.txt": "fine", "sub/key": "k", "sub/other": "o"} {
		p := filepath.Join(tree, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hidden := []string{filepath.Join(tree, ".env"), filepath.Join(tree, "sub", "key")}
	cases := []struct {
		read string
		ok   bool
	}{
		{"ok.txt", true}, {"sub/other", true}, {".env", false}, {"sub/key", false},
	}
	for _, how := range []string{"policy", "base"} {
		for _, c := range cases {
			cmd := "cat " + filepath.Join(tree, c.read) + " >/dev/null && cat /etc/passwd >/dev/null"
			var res childResult
			if how == "policy" {
				res = startChild(t, Policy{Writable: []string{t.TempDir()}, Hidden: hidden}, cmd, nil)
			} else {
				p := Policy{Writable: []string{t.TempDir()}}
				res = startOnBase(t, p, cmd, HiddenEnv(Policy{Hidden: hidden}))
			}
			if (res.code == 0) != c.ok {
				t.Errorf("%s: read %s: exit %d, want readable=%v: %s", how, c.read, res.code, c.ok, res.stderr)
			}
		}
	}
}

// TestHiddenNotReachedThroughLink: a directory on the way to a hidden
// path that is a symbolic link is not descended into, so the read rules
// never land on its target's entries: here the target is hidden itself,
// and stays unreadable, where following the link would have allowed each
// of its entries.
func TestHiddenNotReachedThroughLink(t *testing.T) {
	if landlockABI() == 0 {
		t.Skip("kernel has no Landlock: a worktree child's reads are not held (brood doctor says so)")
	}
	tree := t.TempDir()
	real := filepath.Join(tree, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, data := range map[string]string{filepath.Join(real, "secret"): "hidden", filepath.Join(tree, "ok.txt"): "fine"} {
		if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(real, filepath.Join(tree, "way")); err != nil {
		t.Fatal(err)
	}
	hidden := []string{real, filepath.Join(tree, "way", "other")}
	for _, c := range []struct {
		read string
		ok   bool
	}{{"ok.txt", true}, {"real/secret", false}, {"way/secret", false}} {
		res := startChild(t, Policy{Writable: []string{t.TempDir()}, Hidden: hidden}, "cat "+filepath.Join(tree, c.read)+" >/dev/null", nil)
		if (res.code == 0) != c.ok {
			t.Errorf("read %s: exit %d, want readable=%v: %s", c.read, res.code, c.ok, res.stderr)
		}
	}
}

// TestWriterFilter: a writer's syscall filter refuses mounts (and the rest
// of confinedSyscalls) but leaves it the metadata of what it may write.
func TestWriterFilter(t *testing.T) {
	if landlockABI() == 0 || !FilterAvailable() {
		t.Skip("no Landlock or no syscall table here: brood doctor says what holds instead")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := startChild(t, Policy{Writable: []string{dir}}, "chmod +x "+f+" && touch -d 2001-01-01 "+f+" || exit 3; unshare -m true 2>/dev/null; mount -t tmpfs none "+dir+" 2>/dev/null && exit 4; exit 0", nil)
	if res.code != 0 || res.status.Syscalls != syscallsNote {
		t.Errorf("writer: exit %d (3: metadata refused, 4: mounted), status %+v: %s", res.code, res.status, res.stderr)
	}
}
