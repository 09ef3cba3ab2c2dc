package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	mcpcmd "github.com/broodhq/brood/internal/cli/mcp"
	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/mcpserver"
)

func newMCPCmd(app *cmdutil.Factory) *cobra.Command {
	return mcpcmd.NewCmdMCP(&mcpcmd.Factory{
		Stderr: app.Err,
		Server: func(ctx context.Context) (*mcpserver.Server, func(), error) { return mcpServer(ctx, app) },
	}, nil)
}

// mcpDepth is where `brood mcp` stands in a delegation tree: at the root
// unless the environment it was started in says it is deeper. A caller's
// stamp can only make it deeper (a larger depth, a smaller cap), never
// shallower than this project's settings allow.
func mcpDepth(a *cmdutil.Factory) (int, int) {
	depth, max := 0, a.Settings.MaxSubagentDepth
	if n, err := strconv.Atoi(a.Getenv(delegate.EnvDepth)); err == nil && n > depth {
		depth = n
	}
	if n, err := strconv.Atoi(a.Getenv(delegate.EnvMaxDepth)); err == nil && n >= 0 && n < max {
		max = n
	}
	return depth, max
}

// mcpServer builds the MCP server over a dispatcher for this project, with
// the project's settings and permissions, as the root's Task tool has them.
// stop cancels the background children still running and waits for their
// records.
func mcpServer(ctx context.Context, a *cmdutil.Factory) (*mcpserver.Server, func(), error) {
	depth, max := mcpDepth(a)
	if depth >= max {
		return nil, nil, fmt.Errorf("brood mcp: this process is at depth %d and the subagent depth cap is %d (maxSubagentDepth), so it cannot delegate; run brood mcp outside a brood subagent", depth, max)
	}
	if a.Settings.Model == "" {
		fmt.Fprintln(a.Err, "brood mcp: warning: no model configured (--model is not a flag here: set BROOD_MODEL or model = \"...\" in .brood/settings.toml); subagents whose definitions name no model will fail")
	}
	builtins, _ := cmdutil.SelectTools("")
	reg := a.Registry()
	system := cmdutil.DefaultSystemPrompt(a.Cwd)
	cfg := delegate.Config{
		ProjectRoot: a.ProjectRoot, Workspace: a.Cwd, Registry: reg, Settings: a.Settings,
		Exe: a.ChildExe(), Args: a.ChildArgs(),
		Depth: depth, MaxDepth: max, SourceAgent: "mcp",
		ParentSystem: system, ParentModel: a.Settings.Model, ParentTools: builtins.Names(),
		Permissions: a.Permissions(cmdutil.PermissionFlags{}), Stderr: a.Err,
		Redact: a.Redactor.Redact,
	}
	d, err := delegate.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	// Background children live as long as the server: when the client
	// goes away they are stopped in stages and recorded as cancelled
	// (resumable with brood tasks resume).
	life, cancel := context.WithCancel(ctx)
	d.SetLifetime(life)
	srv, err := mcpserver.New(mcpserver.Config{Dispatcher: d, Registry: reg, ProjectRoot: a.ProjectRoot, Version: Version})
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return srv, func() { cancel(); d.WaitBackground() }, nil
}
