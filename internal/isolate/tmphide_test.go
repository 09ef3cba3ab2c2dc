package isolate

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
)

// runAs runs argv in a real process confined by p (as ConfineChild does)
// and reports whether it succeeded.
func runAs(t *testing.T, p sandbox.Policy, argv ...string) bool {
	t.Helper()
	done := make(chan error, 2)
	sandbox.OnThrowawayThread(func() {
		runtime.LockOSThread()
		if _, _, _, err := sandbox.RestrictForChild(p); err != nil {
			done <- err
			return
		}
		done <- nil
		done <- exec.Command(argv[0], argv[1:]...).Run()
	})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return <-done == nil
}

// TestChildrenReadNoHostTemp (review C6): no class of child reads the
// host's shared temporary directories (another session's transcript in
// /tmp, a file in /var/tmp, another test's directory), nor a file made
// there after it started; each still reads its tree and task directory
// there and runs a program from a PATH directory there.
func TestChildrenReadNoHostTemp(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock on this kernel: nothing hides a path (brood doctor says so)")
	}
	home, proj, bin, copyDir := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	tool := filepath.Join(bin, "mytool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var secrets []string
	for _, dir := range []string{"", "/var/tmp"} {
		f, err := os.CreateTemp(dir, "brood-transcript-*.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("another session's conversation")
		f.Close()
		t.Cleanup(func() { os.Remove(f.Name()) })
		secrets = append(secrets, f.Name())
	}
	other := filepath.Join(t.TempDir(), "brood-apply-1", "config.patch")
	writeFile(t, other, "another run's patch")
	secrets = append(secrets, other)
	writeFile(t, filepath.Join(proj, ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(proj, "a.go"), "tree")
	writeFile(t, filepath.Join(copyDir, "a.go"), "copy")
	own := filepath.Join(dispatch.Root(proj), "01OWN")
	writeFile(t, filepath.Join(own, "envelope.json"), "{}")
	for _, tc := range []struct {
		name string
		env  dispatch.Envelope
		tree string
	}{
		{"read-only", dispatch.Envelope{ReadOnly: true, Workspace: proj, ProjectRoot: proj}, proj},
		{"isolated writer", dispatch.Envelope{Isolation: "worktree", IsolationRoot: copyDir, Workspace: copyDir, ProjectRoot: proj}, copyDir},
		{"in-place writer", dispatch.Envelope{Workspace: proj, ProjectRoot: proj}, proj},
		{"delegating reader", dispatch.Envelope{ReadOnly: true, Workspace: proj, ProjectRoot: proj, AllowedDestinations: []string{"explore"}, MaxDepth: 2, Depth: 1}, proj},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := ChildPolicy(&tc.env, own, NewPolicyBase(nil))
			for _, s := range secrets {
				if readAs(t, p, s) {
					t.Errorf("the child read %s", s)
				}
			}
			for _, r := range []string{filepath.Join(tc.tree, "a.go"), filepath.Join(own, "envelope.json")} {
				if !readAs(t, p, r) {
					t.Errorf("the child cannot read its own %s", r)
				}
			}
			if !runAs(t, p, tool) {
				t.Errorf("the child cannot run %s from its PATH", tool)
			}
		})
	}
	t.Run("made later", func(t *testing.T) {
		env := dispatch.Envelope{ReadOnly: true, Workspace: proj, ProjectRoot: proj}
		p, _ := ChildPolicy(&env, own, NewPolicyBase(nil))
		later := filepath.Join(os.TempDir(), "krb5cc_brood_test_"+filepath.Base(proj))
		t.Cleanup(func() { os.Remove(later) })
		out := readAfter(t, p, filepath.Join(own, "gate"), []string{later}, func() {
			writeFile(t, later, "made after the child started")
		})
		if strings.Contains(out, "made after") {
			t.Errorf("the child read what was made in /tmp after it started: %s", out)
		}
	})
}
