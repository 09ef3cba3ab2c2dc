package config

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/settings"
)

// PathOptions are the flags of `brood config path`.
type PathOptions struct {
	Factory *cmdutil.Factory
	JSON    bool
}

// NewCmdPath builds `brood config path`.
func NewCmdPath(f *cmdutil.Factory, runF func(*PathOptions) error) *cobra.Command {
	opts := &PathOptions{Factory: f}
	cmd := &cobra.Command{
		Use:     "path",
		Example: `  brood config path`,
		Short:   "Print the settings files brood reads, highest precedence first, and which exist",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return pathRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func pathRun(opts *PathOptions) error {
	f := opts.Factory
	var files []settings.File
	if f.Resolved != nil {
		files = append(files, f.Resolved.Files...)
	}
	// Highest precedence first, as a person reads an override chain.
	for i, j := 0, len(files)-1; i < j; i, j = i+1, j-1 {
		files[i], files[j] = files[j], files[i]
	}
	if opts.JSON {
		if files == nil {
			files = []settings.File{}
		}
		return cmdutil.WriteJSON(f.Out, files)
	}
	tw := tabwriter.NewWriter(f.Out, 0, 0, 2, ' ', 0)
	for _, file := range files {
		state := "missing"
		if file.Exists {
			state = "exists"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", file.Source, file.Path, state)
	}
	return tw.Flush()
}
