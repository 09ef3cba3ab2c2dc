package config

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/termsafe"
)

// ListOptions are the flags of `brood config list`.
type ListOptions struct {
	Factory *cmdutil.Factory
	Flags   Flags
	JSON    bool
}

// NewCmdList builds `brood config list`.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{Factory: f}
	cmd := &cobra.Command{
		Use:     "list",
		Example: `  brood config list`,
		Aliases: []string{"ls"},
		Short:   "Print every setting's effective value and where it came from",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return listRun(opts)
		},
	}
	opts.Flags.bind(cmd)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func listRun(opts *ListOptions) error {
	f := opts.Factory
	es, err := entries(f, opts.Flags)
	if err != nil {
		return err
	}
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, es)
	}
	// A key, a value and its file's path may be a repository's text:
	// escaped (termsafe) before the columns are measured.
	tw := tabwriter.NewWriter(termsafe.NewWriter(f.Out), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tFROM")
	for _, e := range es {
		from := e.Origin.String()
		if e.Held != nil {
			from += " (the project's " + valueText(e.Held.Value) + " held back: not trusted)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", termsafe.Line(e.Key), termsafe.Line(valueText(e.Value)), termsafe.Line(from))
	}
	return tw.Flush()
}

// valueText spells a value as a person reads it.
func valueText(v any) string {
	switch x := v.(type) {
	case string:
		if x == "" {
			return `""`
		}
		return x
	case []string:
		if len(x) == 0 {
			return "[]"
		}
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprint(v)
}
