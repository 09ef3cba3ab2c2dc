package testbrood

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// ScriptMain is the TestMain body of a testscript suite: the test binary
// is brood when a script runs it by that name (`exec brood ...`) and when
// it runs as one of brood's children (whose argv[0] names its task,
// brood-<task>-d1-m1).
func ScriptMain(m *testing.M) {
	if strings.HasPrefix(filepath.Base(os.Args[0]), "brood-") {
		Brood()
	}
	testscript.Main(m, map[string]func(){"brood": Brood})
}

// ScriptEnv gives a script its own HOME ($WORK/home, with its config
// directory) and git identity, and sets extra over them.
func ScriptEnv(env *testscript.Env, extra map[string]string) error {
	home := filepath.Join(env.WorkDir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
		"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost",
		"GIT_CONFIG_NOSYSTEM": "1",
	} {
		env.Setenv(k, v)
	}
	for k, v := range extra {
		env.Setenv(k, v)
	}
	return nil
}

// CmdExits is the script command `exits N prog args...`: run prog (as
// exec does, keeping its stdout and stderr for the next commands) and
// require exit status N.
func CmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits STATUS PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %q is not a status", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// ClaudeCode finds Claude Code for a test that runs it beside brood
// (scripts/test installs the pinned version with npm); version, if not
// empty, is the one it must be. Under CI=true its absence (or another
// version) fails the test; elsewhere it skips it, saying how to run it.
func ClaudeCode(t *testing.T, version string) string {
	t.Helper()
	path, err := exec.LookPath("claude")
	if err == nil && version != "" {
		out, verr := exec.CommandContext(t.Context(), path, "--version").Output()
		if verr != nil || !strings.HasPrefix(string(out), version+" ") {
			err = fmt.Errorf("%s --version says %q (%v), want %s", path, strings.TrimSpace(string(out)), verr, version)
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Claude Code %s is needed here: %v; scripts/test installs it (npm install -g @anthropic-ai/claude-code@%s)", version, err, cmp.Or(version, "latest"))
		}
		t.Skipf("Claude Code %s is not installed (%v); run scripts/test, which installs it with npm", version, err)
	}
	return path
}
