package cli_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/broodhq/brood/internal/testbrood"
)

// TestMain makes the test binary brood when testscript runs it by that name
// (scripts run `exec brood ...`, and brood's children are the same binary).
func TestMain(m *testing.M) { testbrood.ScriptMain(m) }

// TestScripts runs the end-to-end CLI stories in testdata/script: each is a
// project in $WORK (a git repository when the script runs git init) with
// its own $HOME, driven by the scripted model.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"exits": testbrood.CmdExits, "lastsession": cmdLastSession, "lastrun": cmdLastRun,
		},
		Setup: func(env *testscript.Env) error { return testbrood.ScriptEnv(env, nil) },
	})
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
