package agents_test

import (
	"os"

	"github.com/broodhq/brood/internal/cli/agents"
	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// With no project or home, `brood agents` lists the built-ins.
func ExampleNewCmdAgents() {
	cmd := agents.NewCmdAgents(cmdutil.NewFactory(cmdutil.IO{Out: os.Stdout, Err: os.Stderr}), nil)
	cmd.SetOut(os.Stdout)
	cmd.SetArgs([]string{})
	_ = cmd.Execute()
	// Output:
	// NAME             SOURCE    MODEL    TOOLS             DESCRIPTION
	// explore          built-in  inherit  read-only + Bash  Fast, read-only code search. Use it to find where something is…
	// general-purpose  built-in  inherit  all               General-purpose agent for self-contained, multi-step tasks such as…
	// plan             built-in  inherit  read-only + Bash  Read-only software architect. Use it to investigate a codebase and…
}
