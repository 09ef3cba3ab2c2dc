package compat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/cli/child"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/mcpclient/mcptest"
	"github.com/broodhq/brood/internal/model/modeltest"
)

// TestMain makes the test binary brood when testscript runs it by that
// name (and brood's children, which are the same binary).
func TestMain(m *testing.M) {
	mcptest.ServeIfAsked()
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
		code = child.Main(ctx, stdio, opts, cli.Links())
	} else {
		code = cli.Main(ctx, stdio, os.Args[1:])
	}
	stop()
	os.Exit(code)
}

// claudeVersion is the Claude Code the suite compares with (scripts/test
// installs it).
const claudeVersion = "2.1.332"

// claudeCode finds Claude Code. Under CI=true its absence (or another
// version) fails the suite; elsewhere it skips it, saying how to run it.
func claudeCode(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("claude")
	if err == nil {
		out, verr := exec.CommandContext(t.Context(), path, "--version").Output()
		if verr != nil || !strings.HasPrefix(string(out), claudeVersion+" ") {
			err = fmt.Errorf("%s --version says %q (%v), want %s", path, strings.TrimSpace(string(out)), verr, claudeVersion)
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Claude Code %s is needed by the compatibility suite: %v; scripts/test installs it (npm install -g @anthropic-ai/claude-code@%s)", claudeVersion, err, claudeVersion)
		}
		t.Skipf("Claude Code %s is not installed (%v); run scripts/test, which installs it", claudeVersion, err)
	}
	return path
}

// TestCompat runs the stories in testdata/*.txtar: each runs `claude -p`
// and `brood -p` with the same flags in the same project against one
// loopback model (fake_test.go) and compares their outputs with
// cmpresult and cmpstream (cmp_test.go).
func TestCompat(t *testing.T) {
	claude := claudeCode(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		RequireExplicitExec: true,
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"exits": cmdExits, "jsonget": cmdJSONGet, "cmpresult": cmdCmpResult, "cmpstream": cmdCmpStream,
			"cmphooks": cmdCmpHooks,
		},
		Setup: func(env *testscript.Env) error {
			fake := modeltest.NewAnthropic(t)
			fake.SetResponder(respond(env.WorkDir))
			home := filepath.Join(env.WorkDir, "home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			// notes-mcp.json: this binary as the notes MCP server (mcptest).
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
				"notes": map[string]any{"command": exe, "env": map[string]string{mcptest.EnvServer: "1", mcptest.EnvApprove: "1"}}}})
			if err := os.WriteFile(filepath.Join(env.WorkDir, "notes-mcp.json"), cfg, 0o644); err != nil {
				return err
			}
			env.Setenv("PATH", filepath.Dir(claude)+string(os.PathListSeparator)+os.Getenv("PATH"))
			for k, v := range map[string]string{
				"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "CLAUDE_CONFIG_DIR": filepath.Join(home, ".claude"),
				"ANTHROPIC_BASE_URL": fake.URL, "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key",
				"DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
				"IS_SANDBOX":      "1", // --dangerously-skip-permissions as root
				"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t",
				"GIT_COMMITTER_EMAIL": "t@localhost", "GIT_CONFIG_NOSYSTEM": "1",
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
