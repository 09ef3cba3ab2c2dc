package agents

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/termsafe"
)

// CheckOptions are the arguments of `brood agents check`.
type CheckOptions struct {
	*Options
	Paths []string
}

// NewCmdCheck builds `brood agents check [PATH...]`.
func NewCmdCheck(parent *Options, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{Options: parent}
	return &cobra.Command{
		Use: "check [PATH...]",
		Example: `  brood agents check
  brood agents check .brood/agents/reviewer.md`,
		Short: "Validate agent definition files",
		Long: "Validate agent definitions and print every warning and error with file:line.\n" +
			"Without PATH, every discovered directory is checked (with precedence, so\n" +
			"shadowing is reported too). A PATH is a file or a directory searched\n" +
			"recursively. Exits with status 1 when there is an error.",
		RunE: func(cmd *cobra.Command, paths []string) error {
			opts.Paths = paths
			if runF != nil {
				return runF(opts)
			}
			var diags []registry.Diagnostic
			var defs []*registry.Definition
			if len(paths) == 0 {
				ro, err := opts.Registry()
				if err != nil {
					return err
				}
				reg, d := registry.Load(ro)
				defs, diags = reg.All(), d
			}
			for _, p := range paths {
				ds, d := registry.CheckPath(p)
				defs = append(defs, ds...)
				diags = append(diags, d...)
			}
			n := len(defs)
			if opts.MaxDepth != nil {
				diags = append(diags, registry.DepthWarnings(defs, opts.MaxDepth())...)
			}
			errs := 0
			for _, d := range diags {
				if d.Severity == registry.SeverityError {
					errs++
				}
			}
			out := cmd.OutOrStdout()
			if opts.JSON {
				if err := writeJSON(out, struct {
					Definitions int                   `json:"definitions"`
					Errors      int                   `json:"errors"`
					Warnings    int                   `json:"warnings"`
					Diagnostics []registry.Diagnostic `json:"diagnostics"`
				}{n, errs, len(diags) - errs, nonNil(diags)}); err != nil {
					return err
				}
			} else {
				// A diagnostic quotes the repository's text.
				safe := termsafe.NewWriter(out)
				for _, d := range diags {
					fmt.Fprintln(safe, d)
				}
				fmt.Fprintf(out, "%d definition(s) loaded, %d warning(s), %d error(s)\n", n, len(diags)-errs, errs)
			}
			if errs > 0 {
				cmd.SilenceUsage = true
				return fmt.Errorf("%w: %d error(s)", ErrCheckFailed, errs)
			}
			return nil
		},
	}
}
