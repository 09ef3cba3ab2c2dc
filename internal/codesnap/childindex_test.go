package codesnap

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestChildFromDonorIsGits: the child's index of a derived checkout,
// made from the donor's without git, lists what git's read-tree -m of the
// new verified index writes, entry for entry, stat data included: files
// dirty in the donor and the base's again, clean there and dirty now,
// deleted, added, made executable, a symlink retargeted, in both object
// formats.
func TestChildFromDonorIsGits(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			ctx := t.Context()
			tree := t.TempDir()
			run := func(index string, args ...string) string {
				t.Helper()
				cmd := exec.Command("git", args...)
				cmd.Dir = tree
				cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
				if index != "" {
					cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+index)
				}
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				return strings.TrimSpace(string(out))
			}
			put := func(files map[string]string) {
				for name, data := range files {
					p := filepath.Join(tree, filepath.FromSlash(name))
					os.Remove(p)
					switch {
					case data == "":
						continue // removed
					case strings.HasPrefix(data, "->"):
						must(t, os.Symlink(data[2:], p))
					default:
						must(t, os.MkdirAll(filepath.Dir(p), 0o755))
						must(t, os.WriteFile(p, []byte(data), 0o644))
					}
				}
			}
			run("", "init", "-q", "--object-format="+format)
			put(map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n", "d/e.txt": "e\n", "run.sh": "#!/bin/sh\n", "link": "->a.txt"})
			run("", "add", "-A")
			run("", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base")
			base := run("", "rev-parse", "HEAD")
			// A dirty state's root tree, from the work tree as it is.
			rootOf := func() string {
				idx := filepath.Join(t.TempDir(), "i")
				run(idx, "add", "-A")
				return run(idx, "write-tree")
			}
			put(map[string]string{"a.txt": "dirty a\n", "new/n.txt": "n\n"})
			root1 := rootOf()
			put(map[string]string{"a.txt": "a\n", "b.txt": "dirty b\n", "d/e.txt": "", "new/m.txt": "m\n", "link": "->b.txt"})
			must(t, os.Chmod(filepath.Join(tree, "run.sh"), 0o755))
			root2 := rootOf()
			// The donor: root1 checked out, its verified index and git's child.
			dir := t.TempDir()
			work := filepath.Join(dir, "w")
			must(t, os.Mkdir(work, 0o755))
			g := gitCmd{dir: work, env: []string{"GIT_DIR=" + filepath.Join(tree, ".git"), "GIT_WORK_TREE=" + work}}
			v1 := filepath.Join(dir, "v1")
			g.env = append(g.env, "GIT_INDEX_FILE="+v1)
			for _, args := range [][]string{{"read-tree", root1}, {"checkout-index", "-a", "-f", "-u"}, {"update-index", "-q", "--refresh"}} {
				if _, err := g.run(ctx, args...); err != nil {
					t.Fatal(err)
				}
			}
			snap := &Snapshot{Base: base}
			repo := filepath.Join(tree, ".git")
			b1, err := os.ReadFile(v1)
			must(t, err)
			child1, err := childIndex(ctx, repo, work, dir, b1, root1, snap)
			must(t, err)
			// The derivation: root1's checkout turned into root2's.
			if _, err := g.run(ctx, "read-tree", "-m", "-u", root1, root2); err != nil {
				t.Fatal(err)
			}
			b2, err := os.ReadFile(v1)
			must(t, err)
			want, err := childIndex(ctx, repo, work, dir, b2, root2, snap)
			must(t, err)
			got, ok := childFromDonor(child1, b2, format)
			if !ok {
				t.Fatal("childFromDonor: not ok")
			}
			oidLen, _ := objectHash(format)
			we, _ := parseIndex(want, oidLen)
			ge, ok := parseIndex(got, oidLen)
			if !ok || len(we) != len(ge) || len(we) == 0 {
				t.Fatalf("entries: git %d, ours %d (ok %v)", len(we), len(ge), ok)
			}
			for i := range we {
				w, o := want[we[i].at:we[i].at+40+oidLen], got[ge[i].at:ge[i].at+40+oidLen]
				if we[i].path != ge[i].path || !bytes.Equal(w, o) {
					t.Errorf("entry %d: git %s %x, ours %s %x", i, we[i].path, w, ge[i].path, o)
				}
			}
			// Git reads it, and sees the dirty state as git's child does.
			p := filepath.Join(dir, "child")
			must(t, os.WriteFile(p, got, 0o600))
			g.env[len(g.env)-1] = "GIT_INDEX_FILE=" + p
			st, err := g.run(ctx, "status", "--porcelain")
			must(t, err)
			for _, line := range []string{" M b.txt", " D d/e.txt", " M link", " M run.sh", "?? new/"} {
				if !strings.Contains(st, line) {
					t.Errorf("git status with our child index lacks %q:\n%s", line, st)
				}
			}
			if strings.Contains(st, "a.txt") {
				t.Errorf("a.txt, the base's again, shows in git status:\n%s", st)
			}
		})
	}
}
