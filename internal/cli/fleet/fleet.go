// Package fleet is `brood fleet`: what a submitter to a fleet of brood
// workers needs besides the commands that submit (brood workflow run
// --engine temporal, brood subagent --engine temporal). Its one verb,
// keygen, makes the key every submission is signed with; a worker runs
// only what a key in its allowlist signed (docs/scale-out.md, "Who a
// worker trusts").
package fleet

import (
	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// NewCmdFleet builds `brood fleet` and its verbs.
func NewCmdFleet(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use: "fleet <command>",
		Example: `  brood fleet --help
  brood worker --temporal 127.0.0.1:7233`,
		Short:       "Keys for submitting to a fleet of brood workers",
		Annotations: map[string]string{cmdutil.FleetAnnotation: cmdutil.FleetAlways},
	}
	// A verb that does not exist is a usage error (exit 2), as for every
	// command; cobra would print the help and exit 0.
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return cmdutil.UsageError("unknown command %q for brood fleet (brood fleet --help lists them)", args[0])
	}
	cmd.AddCommand(NewCmdKeygen(f, nil), NewCmdTrustWorker(f, nil))
	return cmd
}
