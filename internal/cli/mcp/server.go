package mcp

import (
	"context"
	"fmt"
	"strconv"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/mcpserver"
	"github.com/broodhq/brood/internal/root"
	"github.com/broodhq/brood/internal/spawn"
)

// treeDepth is where `brood mcp` stands in a delegation tree, found as every
// brood process finds it (package depth: the markers its parent put where
// a child cannot undo them, in the ancestry and the cgroup). On top of that
// a caller's own stamp in the environment can only make it deeper (a larger
// depth, a smaller cap), never shallower than the markers and this
// project's settings say: an agent that runs brood mcp from a subagent's
// Bash is still below the same cap.
func treeDepth(a *cmdutil.Factory) (int, int) {
	d := depth.Current(a.Settings.MaxSubagentDepth, a.Getenv)
	depth, max := d.Depth, d.Max
	if n, err := strconv.Atoi(a.Getenv(spawn.EnvDepth)); err == nil && n > depth {
		depth = n
	}
	if n, err := strconv.Atoi(a.Getenv(spawn.EnvMaxDepth)); err == nil && n >= 0 && n < max {
		max = n
	}
	return depth, max
}

// newServer builds the MCP server over a dispatcher for this project, with
// the project's settings and permissions, as the root's Task tool has them.
// stop cancels the background children still running and waits for their
// records.
// newServer makes the server's dispatcher; hidden are paths none of its
// children may read (the --token-file of an HTTP start).
func newServer(ctx context.Context, a *cmdutil.Factory, version string, hidden ...string) (*mcpserver.Server, func(), error) {
	depth, max := treeDepth(a)
	if depth >= max {
		return nil, nil, fmt.Errorf("brood mcp: this process is at depth %d and the subagent depth cap is %d (maxSubagentDepth), so it cannot delegate; run brood mcp outside a brood subagent", depth, max)
	}
	if a.Settings.Model == "" {
		fmt.Fprintln(a.Err, "brood mcp: warning: no model configured (--model is not a flag here: set BROOD_MODEL or model = \"...\" in .brood/settings.toml); subagents whose definitions name no model will fail")
	}
	// Background children live as long as the server: when the client
	// goes away they are stopped in stages and recorded as cancelled
	// (resumable with brood tasks resume). The user's hooks run for these
	// dispatches as for brood run's: SubagentStart/SubagentStop paired (a
	// dead server's owed stops fire late), and PreToolUse/PostToolUse for
	// the subagents' tool calls.
	life, cancel := context.WithCancel(ctx)
	rt, err := root.New(life, a, root.Options{Source: "mcp", Depth: func() (int, int) { return depth, max }, Hidden: hidden})
	if err != nil {
		cancel()
		return nil, nil, err
	}
	d, err := rt.MustDispatch("delegate")
	if err != nil {
		cancel()
		rt.Close()
		return nil, nil, err
	}
	reg := a.Registry()
	srv, err := mcpserver.New(mcpserver.Config{Dispatcher: d, Registry: reg, ProjectRoot: a.ProjectRoot, Version: version, Lifetime: life, Redact: a.Redactor.Redact})
	if err != nil {
		cancel()
		rt.Close()
		return nil, nil, err
	}
	return srv, func() { cancel(); d.WaitBackground(); srv.Wait(); rt.Close() }, nil
}
