package dispatch_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
)

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestChangedSinceCommittedChange (redteam19 P1-3): what a writer
// committed is changed, listed against the commit HEAD was on before;
// refs made and moved are said; a commit gone from the object store
// (amend, reflog expire, prune) makes the list incomplete, said as an
// error, never as "nothing changed".
func TestChangedSinceCommittedChange(t *testing.T) {
	cases := []struct {
		name    string
		do      [][]string
		changed []string
		refs    []string
		gone    bool
	}{
		{"commit", [][]string{{"commit", "-qam", "innocent"}}, []string{"main.go"}, []string{"refs/heads/main "}, false},
		{"amend pruned", [][]string{{"commit", "-q", "--amend", "--no-edit", "-a"}, {"reflog", "expire", "--expire=now", "--all"}, {"gc", "-q", "--prune=now"}},
			[]string{"main.go"}, []string{"(rewritten: "}, true},
		{"tag", [][]string{{"tag", "v1"}}, nil, []string{"refs/tags/v1 new"}, false},
		{"detach", [][]string{{"checkout", "-q", "--detach"}}, nil, []string{"HEAD detached at "}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			gitIn(t, root, "init", "-q", "-b", "main")
			if err := os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gitIn(t, root, "add", "-A")
			gitIn(t, root, "commit", "-qm", "mine")
			ctx := context.Background()
			before, err := dispatch.SnapshotTree(ctx, root)
			if err != nil {
				t.Fatal(err)
			}
			if c.changed != nil {
				if err := os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n// evil\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, a := range c.do {
				gitIn(t, root, a...)
			}
			after, err := dispatch.SnapshotTree(ctx, root)
			if err != nil {
				t.Fatal(err)
			}
			changed, err := dispatch.ChangedSince(ctx, before, after)
			if (err != nil) != c.gone {
				t.Errorf("ChangedSince's error: %v, want one: %v", err, c.gone)
			}
			if !c.gone && !slices.Equal(changed, c.changed) {
				t.Errorf("changed %q, want %q", changed, c.changed)
			}
			refs := strings.Join(dispatch.RefChanges(ctx, before, after), "\n")
			for _, w := range c.refs {
				if !strings.Contains(refs, w) {
					t.Errorf("the refs changed do not say %q:\n%s", w, refs)
				}
			}
		})
	}
}
