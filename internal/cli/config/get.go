package config

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/termsafe"
)

// GetOptions are the arguments of `brood config get`.
type GetOptions struct {
	Factory *cmdutil.Factory
	Key     string
	Flags   Flags
	JSON    bool
}

// NewCmdGet builds `brood config get KEY`.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{Factory: f}
	cmd := &cobra.Command{
		Use:     "get KEY",
		Example: `  brood config get model`,
		Short:   "Print one setting's effective value (its origin on stderr)",
		Args:    cobra.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return settings.Keys(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key = args[0]
			if runF != nil {
				return runF(opts)
			}
			return getRun(opts)
		},
	}
	opts.Flags.bind(cmd)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON: the key, its value and its origin")
	return cmd
}

func getRun(opts *GetOptions) error {
	f := opts.Factory
	es, err := entries(f, opts.Flags)
	if err != nil {
		return err
	}
	for _, e := range es {
		if e.Key != opts.Key {
			continue
		}
		if opts.JSON {
			return cmdutil.WriteJSON(f.Out, e)
		}
		fmt.Fprintln(f.Out, termsafe.Line(valueText(e.Value)))
		fmt.Fprintln(f.Err, "from", termsafe.Line(e.Origin.String()))
		if e.Held != nil {
			fmt.Fprintln(f.Err, "not from", termsafe.Line(heldText(e.Held)))
		}
		return nil
	}
	hint := ""
	for _, k := range settings.Keys() {
		if strings.HasSuffix(k, "."+opts.Key) || strings.EqualFold(k, opts.Key) {
			hint = fmt.Sprintf(" (did you mean %s?)", k)
			break
		}
	}
	return cmdutil.UsageError("no setting %q%s; brood config list shows them all", opts.Key, hint)
}
