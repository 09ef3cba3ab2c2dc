package cli_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/cli/child"
	"github.com/broodhq/brood/internal/isolate"
)

// TestMain makes the test binary brood when testscript runs it by that name
// (scripts run `exec brood ...`, and brood's children are the same binary).
func TestMain(m *testing.M) {
	// A child's argv[0] names its task (brood-<task>-d1-m1): it is brood
	// too, though testscript knows only the name "brood".
	if strings.HasPrefix(filepath.Base(os.Args[0]), "brood-") {
		broodMain()
	}
	testscript.Main(m, map[string]func(){"brood": broodMain})
}

// broodMain is cmd/brood's main.
func broodMain() {
	if _, err := isolate.EnterFromEnv(); err != nil {
		fmt.Fprintln(os.Stderr, "brood:", err)
		os.Exit(1)
	}
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stdio := cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv}
	var code int
	if opts, ok := child.Parse(os.Args[1:]); ok {
		code = child.Main(ctx, stdio, opts, cli.Extras())
	} else {
		code = cli.Main(ctx, stdio, os.Args[1:])
	}
	stop()
	os.Exit(code)
}

// TestScripts runs the end-to-end CLI stories in testdata/script: each is a
// project in $WORK (a git repository when the script runs git init) with
// its own $HOME, driven by the scripted model.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"exits": cmdExits, "lastsession": cmdLastSession, "lastrun": cmdLastRun,
		},
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			env.Setenv("HOME", home)
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			for k, v := range map[string]string{
				"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
				"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost",
				"GIT_CONFIG_NOSYSTEM": "1",
			} {
				env.Setenv(k, v)
			}
			return nil
		},
	})
}

// cmdExits is `exits N prog args...`: run prog (as exec does, keeping its
// stdout and stderr for the next commands) and require exit status N.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
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

// cmdLastSession is `lastsession VAR`: set $VAR to the id of the newest
// session under .brood/sessions of the current directory, and $VAR_PREFIX
// to its first 20 characters in lower case.
func cmdLastSession(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: lastsession VAR")
	}
	setNewest(ts, args[0], filepath.Join(".brood", "sessions", "*.jsonl"), ".jsonl")
}

// cmdLastRun is `lastrun VAR`: as lastsession, for the newest workflow run
// under .brood/workflows.
func cmdLastRun(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: lastrun VAR")
	}
	setNewest(ts, args[0], filepath.Join(".brood", "workflows", "*"), "")
}

// setNewest sets $name to the newest id glob matches (ids sort by time)
// and $name_PREFIX to its first 20 characters in lower case.
func setNewest(ts *testscript.TestScript, name, glob, suffix string) {
	files, _ := filepath.Glob(ts.MkAbs(glob))
	if len(files) == 0 {
		ts.Fatalf("nothing matches %s", glob)
	}
	slices.Sort(files)
	id := strings.TrimSuffix(filepath.Base(files[len(files)-1]), suffix)
	ts.Setenv(name, id)
	ts.Setenv(name+"_PREFIX", strings.ToLower(id[:min(20, len(id))]))
}
