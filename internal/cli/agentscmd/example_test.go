package agentscmd

import (
	"os"

	"github.com/broodhq/brood/internal/registry"
)

// With no project or home, `brood agents` lists the built-ins.
func ExampleNewCmd() {
	cmd := NewCmd(Options{Registry: func() (registry.Options, error) { return registry.Options{}, nil }})
	cmd.SetOut(os.Stdout)
	cmd.SetArgs([]string{})
	_ = cmd.Execute()
	// Output:
	// NAME             SOURCE    MODEL    TOOLS             DESCRIPTION
	// explore          built-in  inherit  read-only + Bash  Fast, read-only code search. Use it to find where something is…
	// general-purpose  built-in  inherit  all               General-purpose agent for self-contained, multi-step tasks such as…
	// plan             built-in  inherit  read-only + Bash  Read-only software architect. Use it to investigate a codebase and…
}
