// Package version is `brood version`.
package version

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// Options are what `brood version` prints.
type Options struct {
	Factory *cmdutil.Factory
	Version string
}

// NewCmdVersion builds `brood version`; version is the build's version.
func NewCmdVersion(f *cmdutil.Factory, version string, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f, Version: version}
	return &cobra.Command{
		Use:   "version",
		Short: "Print brood's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
}

func versionRun(opts *Options) error {
	_, err := fmt.Fprintln(opts.Factory.Out, "brood", opts.Version)
	return err
}
