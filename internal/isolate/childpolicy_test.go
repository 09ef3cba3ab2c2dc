package isolate

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
)

// TestChildPolicyHidesMCPTokens: every class of child (reader, isolated
// writer, in-place writer) has ~/.config/brood/mcp, where `brood mcp
// --http` keeps its token, among the paths it may not read, by its real
// path when ~/.config/brood is a link.
func TestChildPolicyHidesMCPTokens(t *testing.T) {
	home := t.TempDir()
	dots := filepath.Join(home, "dots", "brood")
	if err := os.MkdirAll(dots, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".config"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dots, filepath.Join(home, ".config", "brood")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	real, err := filepath.EvalSymlinks(dots)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(real, "mcp")
	work := t.TempDir()
	for _, tc := range []struct {
		name string
		env  dispatch.Envelope
	}{
		{"read-only", dispatch.Envelope{ReadOnly: true, Workspace: work}},
		{"isolated writer", dispatch.Envelope{Isolation: "worktree", IsolationRoot: work, Workspace: work}},
		{"in-place writer", dispatch.Envelope{Workspace: work, ProjectRoot: work}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := ChildPolicy(&tc.env, t.TempDir(), NewPolicyBase(nil))
			if !slices.ContainsFunc(p.Hidden, func(h string) bool { return h == want || beneath(h, want) }) {
				t.Errorf("Hidden = %q, want it to cover %s", p.Hidden, want)
			}
		})
	}
}

// TestRegisteredTokenFilesHidden: a token file registered by `brood mcp
// --http --token-file` is hidden from every class of child, even from a
// dispatcher whose shared policy parts were found before it was
// registered; one inside ~/.config/brood/mcp is not listed (the directory
// is hidden whole); the list is private to its owner.
func TestRegisteredTokenFilesHidden(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	base := NewPolicyBase(nil)
	work := t.TempDir()
	env := dispatch.Envelope{ReadOnly: true, Workspace: work}
	before, _ := ChildPolicy(&env, t.TempDir(), base)
	file := filepath.Join(t.TempDir(), "tok")
	if err := RegisterTokenFile(file); err != nil {
		t.Fatal(err)
	}
	if err := RegisterTokenFile(file); err != nil {
		t.Fatal(err)
	}
	if err := RegisterTokenFile(filepath.Join(home, ".config", "brood", "mcp", "x.token")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, ".config", "brood", "mcp")
	if got := TokenFiles(dir); !slices.Equal(got, []string{file}) {
		t.Errorf("TokenFiles = %q, want just %s", got, file)
	}
	if fi, err := os.Stat(filepath.Join(dir, tokenFilesName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the list: %v %v, want mode 0600", fi, err)
	}
	for _, e := range []dispatch.Envelope{env, {Workspace: work, ProjectRoot: work}, {Isolation: "worktree", IsolationRoot: work, Workspace: work}} {
		p, _ := ChildPolicy(&e, t.TempDir(), base)
		if !slices.Contains(p.Hidden, file) {
			t.Errorf("Hidden = %q, want it to hold %s", p.Hidden, file)
		}
	}
	if slices.Contains(before.Hidden, file) {
		t.Errorf("hidden before it was registered: %q", before.Hidden)
	}
}

// TestInPlaceViewHoldsTrustedPrograms: the files trusted hooks and MCP
// servers run are bound read-only in an in-place writer's view when they
// are regular files reached through no link; a link, a directory or a
// missing file is left to the guard; allow_config_changes holds them too.
func TestInPlaceViewHoldsTrustedPrograms(t *testing.T) {
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	for _, f := range []string{"scripts/guard.sh", "scripts/lib.sh", "real/x.sh"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	task := filepath.Join(root, ".brood", "dispatch", "T")
	if err := os.MkdirAll(task, 0o755); err != nil {
		t.Fatal(err)
	}
	env := &dispatch.Envelope{Workspace: root, ProjectRoot: root}
	held := []string{"scripts/guard.sh", "scripts/lib.sh", "linked/x.sh", "scripts", "missing.sh"}
	v := InPlaceViewFor(env, task, false, held)
	for _, want := range []string{"scripts/guard.sh", "scripts/lib.sh"} {
		if !slices.Contains(v.ReadOnly, filepath.Join(root, want)) {
			t.Errorf("%s not held read-only: %q", want, v.ReadOnly)
		}
	}
	for _, not := range []string{"linked/x.sh", "scripts", "missing.sh"} {
		if slices.Contains(v.ReadOnly, filepath.Join(root, not)) {
			t.Errorf("%s held: %q", not, v.ReadOnly)
		}
	}
	if !slices.Contains(v.Writable, task) {
		t.Errorf("the task directory is not writable in the view: %q", v.Writable)
	}
	// allow_config_changes gives the writer the configuration, never the
	// programs the root runs.
	if v := InPlaceViewFor(env, task, true, held); !slices.Contains(v.ReadOnly, filepath.Join(root, "scripts/guard.sh")) ||
		!slices.Contains(v.ReadOnly, filepath.Join(root, "scripts/lib.sh")) {
		t.Errorf("allow_config_changes does not hold the programs: %q", v.ReadOnly)
	}
}

// TestChildPolicyAddDirs: the run's --add-dir directories are writable by
// an in-place writer only (a reader writes nothing; an isolated writer's
// work is its copy), by their real paths; a missing or relative one is
// left out.
func TestChildPolicyAddDirs(t *testing.T) {
	work, added := t.TempDir(), t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(added, link); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(added)
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{link, filepath.Join(added, "missing"), "relative"}
	for _, tc := range []struct {
		name string
		env  dispatch.Envelope
		want bool
	}{
		{"read-only", dispatch.Envelope{ReadOnly: true, Workspace: work, AddDirs: dirs}, false},
		{"isolated writer", dispatch.Envelope{Isolation: "worktree", IsolationRoot: work, Workspace: work, AddDirs: dirs}, false},
		{"in-place writer", dispatch.Envelope{Workspace: work, ProjectRoot: work, AddDirs: dirs}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := ChildPolicy(&tc.env, t.TempDir(), NewPolicyBase(nil))
			if got := slices.Contains(p.Writable, real); got != tc.want {
				t.Errorf("Writable = %q: holds %s %v, want %v", p.Writable, real, got, tc.want)
			}
			for _, w := range p.Writable {
				if w == "relative" || w == filepath.Join(added, "missing") || w == filepath.Join(real, "missing") {
					t.Errorf("Writable holds %s", w)
				}
			}
		})
	}
}

// TestChildPolicyRefusedAddDirs (security review, finding 1): an added
// directory that is or holds the home directory, holds or is inside
// brood's or Claude Code's configuration or state, or holds or is inside
// a path no child reads, is not writable by an in-place writer (a write
// rule would let it read the hidden path, or plant hooks for the user's
// next session); one beside them is.
func TestChildPolicyRefusedAddDirs(t *testing.T) {
	home := t.TempDir()
	if r, err := filepath.EvalSymlinks(home); err == nil {
		home = r
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	secretDir := filepath.Join(t.TempDir(), "keys")
	secret := filepath.Join(secretDir, "tok")
	for _, d := range []string{".config/brood/agents", ".claude", ".local/state/brood", "src/other", "src/app"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(secretDir, "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(home, "src", "app")
	for _, tc := range []struct {
		dir  string
		want bool
	}{
		{home, false},
		{filepath.Dir(home), false},
		{"/", false},
		{filepath.Join(home, ".config"), false},
		{filepath.Join(home, ".config", "brood", "agents"), false},
		{filepath.Join(home, ".claude"), false},
		{filepath.Join(home, ".local"), false},
		{filepath.Dir(secretDir), false},
		{secretDir, false},
		{filepath.Join(secretDir, "inner"), false},
		{filepath.Join(home, "src", "other"), true},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			env := dispatch.Envelope{Workspace: work, ProjectRoot: work, AddDirs: []string{tc.dir}}
			p, _ := ChildPolicy(&env, t.TempDir(), NewPolicyBase([]string{secretDir}))
			if got := slices.Contains(p.Writable, tc.dir); got != tc.want {
				t.Errorf("Writable = %q: holds %s %v, want %v", p.Writable, tc.dir, got, tc.want)
			}
			if why := AddDirRefused(tc.dir, []string{secretDir}); (why == "") != tc.want {
				t.Errorf("AddDirRefused(%s) = %q, want refused %v", tc.dir, why, !tc.want)
			}
		})
	}
}

// TestInPlaceViewHoldsAddDirs (security review, finding 1): an added
// directory's git configuration, .brood, .claude and .mcp.json are held
// read-only in an in-place writer's view as the work tree's are (its .git
// a mount point); with allow_config_changes its .claude and .mcp.json are
// the writer's, its git configuration and .brood are not.
func TestInPlaceViewHoldsAddDirs(t *testing.T) {
	root, added := t.TempDir(), t.TempDir()
	if r, err := filepath.EvalSymlinks(added); err == nil {
		added = r
	}
	for _, d := range []string{".git/hooks", ".claude", ".brood"} {
		if err := os.MkdirAll(filepath.Join(added, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".git/config", ".mcp.json"} {
		if err := os.WriteFile(filepath.Join(added, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	task := filepath.Join(root, ".brood", "dispatch", "T")
	if err := os.MkdirAll(task, 0o755); err != nil {
		t.Fatal(err)
	}
	env := &dispatch.Envelope{Workspace: root, ProjectRoot: root, AddDirs: []string{added}}
	for _, allow := range []bool{false, true} {
		v := InPlaceViewFor(env, task, allow, nil)
		for e, held := range map[string]bool{".git/config": true, ".git/hooks": true, ".brood": true, ".claude": !allow, ".mcp.json": !allow} {
			if got := slices.Contains(v.ReadOnly, filepath.Join(added, e)); got != held {
				t.Errorf("allow_config_changes %v: %s held %v, want %v (ReadOnly %q)", allow, e, got, held, v.ReadOnly)
			}
		}
		if !slices.Contains(v.Writable, filepath.Join(added, ".git")) {
			t.Errorf("the added directory's .git is no mount point: %q", v.Writable)
		}
	}
}
