package isolate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
	"golang.org/x/sys/unix"
)

// readAs runs `cat path` in a real process confined by p (from a thread
// put under it, as ConfineChild does) and reports whether it read it.
func readAs(t *testing.T, p sandbox.Policy, path string) bool {
	t.Helper()
	type res struct {
		ok  bool
		err error
	}
	done := make(chan res, 1)
	sandbox.OnThrowawayThread(func() {
		runtime.LockOSThread()
		if _, _, _, err := sandbox.RestrictForChild(p); err != nil {
			done <- res{err: err}
			return
		}
		done <- res{ok: exec.Command("cat", path).Run() == nil}
	})
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.ok
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestChildrenReadNoSecrets: no class of child (reader, isolated writer,
// in-place writer, a fleet worker's child working in the worker's cache,
// a child that delegates) reads a credential store, ~/.config/brood (a
// delegating child reads its agents and trust records, nothing else), the
// worker's other jobs, or another task's directory; nor a credential
// store made after it started. Each reads its own tree, task directory
// and the objects its git borrows.
func TestChildrenReadNoSecrets(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock on this kernel: nothing hides a path (brood doctor says so)")
	}
	home, cache, proj := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", cache)
	var secrets []string
	for _, rel := range credentialStores() {
		p := filepath.Join(home, filepath.FromSlash(rel))
		if rel == ".config/brood" {
			p = filepath.Join(p, "fleet", "submitter.key")
		} else {
			p = filepath.Join(p, "x")
		}
		writeFile(t, p, "secret")
		secrets = append(secrets, p)
	}
	settings := filepath.Join(home, ".config", "brood", "settings.toml")
	agents := filepath.Join(home, ".config", "brood", "agents", "a.md")
	writeFile(t, settings, "token")
	writeFile(t, agents, "agent")
	fleet := filepath.Join(cache, "brood", "fleet")
	other := filepath.Join(fleet, "jobs", "other-1", "tree", "secret.go")
	mine := filepath.Join(fleet, "jobs", "mine-1", "tree")
	clone := filepath.Join(fleet, "clones", "repo", "objects")
	writeFile(t, other, "theirs")
	writeFile(t, filepath.Join(mine, "a.go"), "mine")
	writeFile(t, filepath.Join(clone, "ab", "cd"), "object")
	writeFile(t, filepath.Join(mine, ".git", "objects", "info", "alternates"), clone+"\n")
	writeFile(t, filepath.Join(proj, ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(proj, "a.go"), "tree")
	copyDir := t.TempDir()
	writeFile(t, filepath.Join(copyDir, "a.go"), "copy")
	root := dispatch.Root(proj)
	sibling := filepath.Join(root, "01SIBLING", "session.jsonl")
	writeFile(t, sibling, "their transcript")
	own := filepath.Join(root, "01OWN")
	writeFile(t, filepath.Join(own, "envelope.json"), "{}")
	delegates := []string{"explore"}
	for _, tc := range []struct {
		name      string
		env       dispatch.Envelope
		readable  []string
		delegator bool
	}{
		{"read-only", dispatch.Envelope{ReadOnly: true, Workspace: proj, ProjectRoot: proj}, []string{filepath.Join(proj, "a.go")}, false},
		{"isolated writer", dispatch.Envelope{Isolation: "worktree", IsolationRoot: copyDir, Workspace: copyDir, ProjectRoot: proj}, []string{filepath.Join(copyDir, "a.go")}, false},
		{"in-place writer", dispatch.Envelope{Workspace: proj, ProjectRoot: proj}, []string{filepath.Join(proj, "a.go")}, false},
		{"fleet reader", dispatch.Envelope{ReadOnly: true, Workspace: mine, ProjectRoot: proj}, []string{filepath.Join(mine, "a.go"), filepath.Join(clone, "ab", "cd")}, false},
		{"fleet writer", dispatch.Envelope{Isolation: "worktree", IsolationRoot: mine, Workspace: mine, ProjectRoot: proj}, []string{filepath.Join(mine, "a.go"), filepath.Join(clone, "ab", "cd")}, false},
		{"delegating reader", dispatch.Envelope{ReadOnly: true, Workspace: proj, ProjectRoot: proj, AllowedDestinations: delegates, MaxDepth: 2, Depth: 1}, []string{agents}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := ChildPolicy(&tc.env, own, NewPolicyBase(nil))
			for _, s := range append(secrets, other) {
				if readAs(t, p, s) {
					t.Errorf("the child read %s", s)
				}
			}
			if readAs(t, p, settings) {
				t.Errorf("the child read %s (a delegating one reads its parent's copy: review C7)", settings)
			}
			if !tc.delegator && !tc.env.ReadOnly && tc.env.Isolation == "" {
				// An in-place writer's tree holds the task directories:
				// its Landlock rule on the tree lets it read them.
			} else if !tc.delegator && readAs(t, p, sibling) {
				t.Errorf("the child read another task's %s", sibling)
			}
			for _, r := range append(tc.readable, filepath.Join(own, "envelope.json")) {
				if !readAs(t, p, r) {
					t.Errorf("the child cannot read its own %s", r)
				}
			}
		})
	}
	t.Run("made later", func(t *testing.T) {
		env := dispatch.Envelope{ReadOnly: true, Workspace: proj, ProjectRoot: proj}
		p, _ := ChildPolicy(&env, own, NewPolicyBase(nil))
		aws, later := filepath.Join(home, ".aws"), filepath.Join(home, ".aws2")
		if err := os.RemoveAll(aws); err != nil {
			t.Fatal(err)
		}
		made := []string{filepath.Join(aws, "credentials"), later}
		out := readAfter(t, p, filepath.Join(own, "go"), made, func() {
			for _, m := range made {
				writeFile(t, m, "made after the child started")
			}
		})
		if strings.Contains(out, "made after") {
			t.Errorf("the child read what was made after it started: %s", out)
		}
	})
}

// readAfter starts a real process confined by p that waits on a fifo at
// gate, then cats paths; it runs before before it opens the gate, and
// returns what the process printed.
func readAfter(t *testing.T, p sandbox.Policy, gate string, paths []string, before func()) string {
	t.Helper()
	if err := unix.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	type res struct {
		out []byte
		err error
	}
	done, started := make(chan res, 1), make(chan error, 1)
	sandbox.OnThrowawayThread(func() {
		runtime.LockOSThread()
		if _, _, _, err := sandbox.RestrictForChild(p); err != nil {
			started <- err
			return
		}
		var out strings.Builder
		cmd := exec.Command("sh", append([]string{"-c", `read x < "$0"; cat "$@" 2>&1; true`, gate}, paths...)...)
		cmd.Stdout = &out
		err := cmd.Start()
		started <- err
		if err == nil {
			err = cmd.Wait()
		}
		done <- res{out: []byte(out.String()), err: err}
	})
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	before()
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "go")
	f.Close()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	return string(r.out)
}

// TestHideAround: a hidden directory that holds a kept path is split into
// its other entries; one beneath a kept path stays hidden.
func TestHideAround(t *testing.T) {
	d := t.TempDir()
	for _, rel := range []string{"a/keep/x", "a/other/y", "a/z", "b/.ssh/k"} {
		writeFile(t, filepath.Join(d, rel), "")
	}
	got := hideAround([]string{filepath.Join(d, "a"), filepath.Join(d, "b", ".ssh")}, []string{filepath.Join(d, "a", "keep"), filepath.Join(d, "b")})
	want := fmt.Sprint([]string{filepath.Join(d, "a", "other"), filepath.Join(d, "a", "z"), filepath.Join(d, "b", ".ssh")})
	if fmt.Sprint(got) != want {
		t.Errorf("hideAround = %v, want %v", got, want)
	}
	// One that cannot be listed (here not a directory) is hidden whole, as
	// the doc says; it hid nothing (review C9: fail open).
	odd := filepath.Join(d, "b", ".ssh", "k")
	if got := hideAround([]string{odd}, []string{filepath.Join(odd, "x")}); fmt.Sprint(got) != fmt.Sprint([]string{odd}) {
		t.Errorf("hideAround of an unlistable path = %v, want it whole", got)
	}
}
