package temporal

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
)

// TestMovedCheckoutKeepsItsRecords: a keyless checkout's records are
// under the state directory of its common git dir's path; moved, the
// checkout takes them over, so its call is still its own, also when its
// first act is a capture. Nothing else does (review35 P3-9): not a copy
// of it (cp -a), once the original is gone, nor while it is there, not
// another checkout given every file of its .git/ (what a child of any
// project can read and write there), whose taking would leave the moved
// checkout's call unverified, and not a checkout made anew at its path
// (git init, a clone), whether the first is gone or moved.
func TestMovedCheckoutKeepsItsRecords(t *testing.T) {
	const task = "01JAAAAAAAAAAAAAAAAAAAAAAA"
	in := CallInputW{Spec: call.Spec{Prompt: "ALPHA"}, Queue: "q"}
	type ask struct {
		dir string
		own bool
	}
	for _, tc := range []struct {
		name string
		move func(t *testing.T, repo string) []ask // the checkouts asked after, in order
	}{
		{"moved", func(t *testing.T, repo string) []ask {
			return []ask{{rename(t, repo, repo+"-moved"), true}}
		}},
		{"moved, its first act a capture (review38 P2-1)", func(t *testing.T, repo string) []ask {
			moved := rename(t, repo, repo+"-moved")
			if err := os.WriteFile(filepath.Join(moved, "f"), []byte("dirty\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			blobs, err := blobstore.Open(t.Context(), "file://"+t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := codesnap.Capture(t.Context(), blobs, moved); err != nil {
				t.Fatal(err)
			}
			return []ask{{moved, true}}
		}},
		{"a checkout made anew at its path (review38 P3-1)", func(t *testing.T, repo string) []ask {
			if err := os.RemoveAll(filepath.Join(repo, ".git")); err != nil {
				t.Fatal(err)
			}
			gitInit(t, repo)
			return []ask{{repo, false}}
		}},
		{"moved, and a clone made at its old path first", func(t *testing.T, repo string) []ask {
			moved := rename(t, repo, repo+"-moved")
			gitIn(t, filepath.Dir(repo), "clone", "-q", moved, repo)
			return []ask{{repo, false}, {moved, true}}
		}},
		{"a copy, the original removed", func(t *testing.T, repo string) []ask {
			copied := copyTree(t, repo)
			if err := os.RemoveAll(repo); err != nil {
				t.Fatal(err)
			}
			return []ask{{copied, false}}
		}},
		{"a copy, the original still there", func(t *testing.T, repo string) []ask {
			return []ask{{copyTree(t, repo), false}, {repo, true}}
		}},
		{"another checkout given its .git files, the checkout then moved", func(t *testing.T, repo string) []ask {
			other := t.TempDir()
			gitInit(t, other)
			ents, err := os.ReadDir(filepath.Join(repo, ".git"))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if !e.Type().IsRegular() {
					continue
				}
				b, err := os.ReadFile(filepath.Join(repo, ".git", e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(other, ".git", e.Name()), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			moved := rename(t, repo, repo+"-moved")
			return []ask{{other, false}, {moved, true}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			repo, _ := recordsRepo(t)
			e := &Engine{cfg: Config{Namespace: "ns", Code: &CodeConfig{Dir: repo}}}
			e.withOrigin(map[string]any{}) // (brood before made a secret here)
			if err := e.keepSent(ctx, task, in); err != nil {
				t.Fatal(err)
			}
			e.keepRun(ctx, task, in, "run-1")
			for _, a := range tc.move(t, repo) {
				after := &Engine{cfg: Config{Namespace: "ns", Code: &CodeConfig{Dir: a.dir}}}
				err := after.sentBy(ctx, task, in, "run-1")
				u := after.unverified(ctx, task)
				if own := err == nil && u == ""; own != a.own {
					t.Errorf("%s: sentBy %v, unverified %q: the call taken as the checkout's own = %v, want %v", a.dir, err, u, own, a.own)
				}
				if !a.own && !strings.HasPrefix(u, "unverified:") {
					t.Errorf("%s: unverified %q", a.dir, u)
				}
			}
		})
	}
}

func rename(t *testing.T, from, to string) string {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
	return to
}

// copyTree is a copy of dir (cp -a: modes and times kept) beside it.
func copyTree(t *testing.T, dir string) string {
	t.Helper()
	to := dir + "-copy"
	if out, err := exec.Command("cp", "-a", dir, to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	return to
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
}
