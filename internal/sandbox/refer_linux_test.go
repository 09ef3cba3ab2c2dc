package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMountFirstChildMovesItsOwnFiles (review22 P2-2): a writer that
// mounts first (an overlay child, an in-place writer) links and renames
// files from one of its own directories into another (`git mv a/x b/x`,
// `ln a/x b/x`), however it applies its domain after its mounts, the
// known-projects layer stacked on it. Landlock counts that right (REFER)
// as handled by every layer, so the base domain it was started in, which
// grants it nowhere, refused them all with EXDEV. It still moves nothing
// out of a path it may not read (its policy's, the layer's in its own
// tree: a move that would gain the right to read), nor into one it may
// not write; a read-only child (still on its base) moves nothing in the
// tree.
func TestMountFirstChildMovesItsOwnFiles(t *testing.T) {
	abi := landlockABI()
	if abi < 2 {
		t.Skip("no Landlock REFER right on this kernel: every move between directories is refused (EXDEV)")
	}
	for _, class := range []struct {
		name     string
		readOnly bool
		want     []string
	}{
		{"writer", false, []string{"TREE-MOVED", "TASK-MOVED"}},
		// (Its base domain refuses it REFER everywhere: docs/trust.md,
		// Limits.)
		{"read-only", true, nil},
	} {
		for _, way := range []struct {
			name string
			env  []string
		}{
			{"default", nil},
			{"no scope, ABI 5", []string{abiCapEnv + "=5"}},
			{"forced re-exec", []string{forceReexecEnv + "=1"}},
		} {
			t.Run(class.name+"/"+way.name, func(t *testing.T) {
				res := moveProbe(t, class.readOnly, way.env)
				for _, w := range class.want {
					if !strings.Contains(res.stderr, w) {
						t.Errorf("no %s: the child could not link or rename between its own directories (exit %d, %s):\n%s", w, res.code, res.status, res.stderr)
					}
				}
				if class.readOnly && !strings.Contains(res.stderr, "ln: failed to create hard link 'b/x'") {
					t.Errorf("the read-only child's link in the tree did not fail:\n%s", res.stderr)
				}
				for _, bad := range []string{"TREE-MOVED", "HIDDEN-LINKED", "HIDDEN-MOVED", "INTO-READONLY"} {
					if !slices.Contains(class.want, bad) && strings.Contains(res.stderr, bad) {
						t.Errorf("%s:\n%s", bad, res.stderr)
					}
				}
			})
		}
	}
}

// moveProbe starts a child prepared for its mounts (BaseForChild, new user
// and mount namespaces, a tmpfs mounted first, the known-projects layer
// passed) that tries its moves, and returns what it printed.
func moveProbe(t *testing.T, readOnly bool, env []string) childResult {
	t.Helper()
	tree, task, ro, hidden, mnt := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	mkfile(t, filepath.Join(hidden, "s"), "s")
	for _, f := range []string{"a/x", "a/y", "other/.brood/r"} {
		mkfile(t, filepath.Join(tree, f), f)
	}
	for _, d := range []string{"b", "p", "q"} {
		dir := tree
		if d != "b" {
			dir = task
		}
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mkfile(t, filepath.Join(task, "p", "f"), "f")
	l, err := BuildLayer([]string{filepath.Join(tree, "other", ".brood")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	p := Policy{ReadOnly: readOnly, Writable: []string{task}, Hidden: []string{hidden}, Network: true}
	if !readOnly {
		p.Writable = append(p.Writable, tree)
	}
	script := `cd ` + tree + ` && (ln a/x b/x && mv a/y b/y) 2>&1 && echo TREE-MOVED
cd ` + task + ` && ln p/f q/f && mv p/f q/g && echo TASK-MOVED
cd ` + tree + `; for h in ` + hidden + `/s other/.brood/r; do ln $h b/s 2>&1 && echo HIDDEN-LINKED; mv $h b/s2 2>&1 && echo HIDDEN-MOVED; done
ln ` + task + `/q/f ` + ro + `/f 2>&1 && echo INTO-READONLY; mv ` + task + `/q/g ` + ro + `/g 2>&1 && echo INTO-READONLY; true`
	var stdout, stderr strings.Builder
	cmdEnv := append(env, mountFirstEnv+"="+mnt)
	err = runOnBaseWith(t, p, script, &stdout, &stderr, func(cmd *exec.Cmd) { LayerForChild(cmd, l) }, cmdEnv...)
	res := childResultOf(t, err, stdout.String(), stderr.String())
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, f := range []string{filepath.Join(hidden, "s"), filepath.Join(tree, "other", ".brood", "r")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("a hidden file is gone: %v", err)
		}
	}
	return res
}

func mkfile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
