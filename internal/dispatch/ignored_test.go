package dispatch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestChangedNamesIgnoredFiles: the tree's ignored paths are compared
// too (review commithide P1-1): an ignored file made, changed or deleted
// is named; an ignored directory made during the run by its files when it
// holds few, as itself when it holds many (node_modules/ is one line, not
// thousands).
func TestChangedNamesIgnoredFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, tc := range []struct {
		name string
		do   func(root string) error
		want []string
	}{
		{"file made under a new self-ignoring gitignore", func(root string) error {
			if err := os.MkdirAll(filepath.Join(root, "d"), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(root, "d/.gitignore"), []byte("*\n"), 0o644); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(root, "d/evil.go"), []byte("evil\n"), 0o644)
		}, []string{"d/.gitignore", "d/evil.go"}},
		{"ignored file changed", func(root string) error {
			return os.WriteFile(filepath.Join(root, "app.log"), []byte("mine\nmore\n"), 0o644)
		}, []string{"app.log"}},
		{"ignored file deleted", func(root string) error { return os.Remove(filepath.Join(root, "app.log")) }, []string{"app.log"}},
		{"small ignored directory made", func(root string) error {
			return writeN(filepath.Join(root, "build/sub"), 2)
		}, []string{"build/sub/f0", "build/sub/f1"}},
		{"large ignored directory made", func(root string) error {
			return writeN(filepath.Join(root, "build/deps"), maxNewIgnoredDir+5)
		}, []string{"build/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			git := func(args ...string) {
				cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v %s", args, err, out)
				}
			}
			git("init", "-q")
			mustDo(t, os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.log\nbuild/\n"), 0o644))
			git("add", "-A")
			git("commit", "-qm", "init")
			mustDo(t, os.WriteFile(filepath.Join(root, "app.log"), []byte("mine\n"), 0o644))
			before, err := SnapshotTree(t.Context(), root)
			mustDo(t, err)
			mustDo(t, tc.do(root))
			after, err := SnapshotTree(t.Context(), root)
			mustDo(t, err)
			if got := Changed(before, after); !slices.Equal(got, tc.want) {
				t.Errorf("changed %q, want %q", got, tc.want)
			}
		})
	}
}

func writeN(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), []byte("x\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}
