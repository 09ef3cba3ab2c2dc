package tool

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitInit(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("git", "init", "-q", dir)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// TestReadOnlyGitOnlyInAPlainRepository: the read-only set covers git only
// where the repository's configuration names no program; a tarball's
// .git/config with core.fsmonitor, a bare repository's layout in the tree,
// a .git file pointing at one, or a cd first, and git status is asked
// about, not run. git -C under a rule for all of git holds to the same.
func TestReadOnlyGitOnlyInAPlainRepository(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	none, err := NewPermissions("default", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	all, err := NewPermissions("default", []string{"Bash(git:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	check := func(p *Permissions, ws, cmd string) Decision {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		return p.Check("Bash", in, ws)
	}

	plain := t.TempDir()
	gitInit(t, plain)
	appendFile(t, filepath.Join(plain, ".git", "config"), "[remote \"origin\"]\n\turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[user]\n\tname = A\n")
	for _, cmd := range []string{"git status", "git log -p -3", "git diff --stat", "git -C . status"} {
		p := none
		if strings.Contains(cmd, "-C") {
			p = all
		}
		if d := check(p, plain, cmd); d.Verdict != Allow {
			t.Errorf("plain repository: %q: %v (%s)", cmd, d.Verdict, d.Reason)
		}
	}

	hostile := map[string]func(dir string){
		"fsmonitor": func(dir string) {
			gitInit(t, dir)
			appendFile(t, filepath.Join(dir, ".git", "config"), "[core]\n\tfsmonitor = touch pwned\n")
		},
		"textconv": func(dir string) {
			gitInit(t, dir)
			appendFile(t, filepath.Join(dir, ".git", "config"), "[diff \"x\"]\n\ttextconv = touch pwned\n")
		},
		"include": func(dir string) {
			gitInit(t, dir)
			appendFile(t, filepath.Join(dir, ".git", "config"), "[include]\n\tpath = ../evil.cfg\n")
		},
		"bare layout": func(dir string) {
			for _, d := range []string{"objects", "refs"} {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			appendFile(t, filepath.Join(dir, "HEAD"), "ref: refs/heads/main\n")
			appendFile(t, filepath.Join(dir, "config"), "[core]\n\tbare = true\n\tpager = touch pwned\n")
		},
		"gitdir file": func(dir string) {
			appendFile(t, filepath.Join(dir, ".git"), "gitdir: evil\n")
			appendFile(t, filepath.Join(dir, "evil", "config"), "[alias]\n\tst = !touch pwned\n")
		},
	}
	for name, make := range hostile {
		ws := t.TempDir()
		make(ws)
		if d := check(none, ws, "git status"); d.Verdict == Allow || !strings.Contains(d.Reason, "configuration") {
			t.Errorf("%s: git status: %v (%s)", name, d.Verdict, d.Reason)
		}
		outer := t.TempDir()
		gitInit(t, outer)
		sub := filepath.Join(outer, "vendor", "x")
		make(sub)
		if d := check(all, outer, "git -C vendor/x log"); d.Verdict == Allow || !strings.Contains(d.Reason, "-C") {
			t.Errorf("%s: git -C into it: %v (%s)", name, d.Verdict, d.Reason)
		}
	}
	for _, cmd := range []string{"cd - && git status", "cd && git status", "cd $D && git status", "cd /tmp && git status", "cd .. && git status"} {
		if d := check(none, plain, cmd); d.Verdict == Allow || !strings.Contains(d.Reason, "cd") {
			t.Errorf("%q: %v (%s)", cmd, d.Verdict, d.Reason)
		}
	}
	if err := os.MkdirAll(filepath.Join(plain, "sub", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	if d := check(none, plain, "cd sub && cd deeper && git log -3 -- *.go"); d.Verdict != Allow {
		t.Errorf("git after a cd inside the repository: %v (%s)", d.Verdict, d.Reason)
	}
	nested := filepath.Join(plain, "vendored")
	hostile["fsmonitor"](nested)
	if d := check(none, plain, "cd vendored && git status"); d.Verdict == Allow || !strings.Contains(d.Reason, "configuration") {
		t.Errorf("git after a cd into a hostile nested repository: %v (%s)", d.Verdict, d.Reason)
	}

	// Through the tools: the hostile git status does not run.
	ws := t.TempDir()
	hostile["fsmonitor"](ws)
	set := NewSet(Builtins()...)
	in, _ := json.Marshal(map[string]string{"command": "git status"})
	if r := set.Run(context.Background(), &Env{Dir: ws, Perms: none}, "Bash", in); !r.IsError {
		t.Errorf("git status ran in a repository with core.fsmonitor: %s", r.Content)
	}
	if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
		t.Error("core.fsmonitor ran")
	}
	if r := set.Run(context.Background(), &Env{Dir: plain, Perms: none}, "Bash", in); r.IsError || !strings.Contains(r.Content, "branch") {
		t.Errorf("git status in a plain repository: %s", r.Content)
	}
}
