// Package version is `brood version` and the text of `brood --version`:
// the module version and the VCS state the binary was built from.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// Options are what `brood version` prints.
type Options struct {
	Factory *cmdutil.Factory
	Version string // set with -ldflags; "dev" when not (then the build info decides)
}

// NewCmdVersion builds `brood version`; version is the -ldflags version.
func NewCmdVersion(f *cmdutil.Factory, version string, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f, Version: version}
	return &cobra.Command{
		Use:     "version",
		Example: `  brood version`,
		Short:   "Print brood's version, the commit it was built from and the Go version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
}

func versionRun(opts *Options) error {
	_, err := fmt.Fprintln(opts.Factory.Out, "brood", String(opts.Version))
	return err
}

// String is the version line after "brood ": the -ldflags version, else
// the module version the build recorded (`go install m@v`, or the
// pseudo-version of a build in a repository), else "devel"; then the
// commit, its time and whether the tree was modified when the build
// recorded them, or "revision unknown" when nothing names the source (a
// devel build with -buildvcs=false or outside a repository); then the Go
// version and platform.
func String(ldflags string) string {
	bi, _ := debug.ReadBuildInfo()
	return Format(ldflags, bi)
}

// Format is String for the given build info (nil: none).
func Format(ldflags string, bi *debug.BuildInfo) string {
	v := ldflags
	if v == "dev" {
		v = ""
	}
	if v == "" && bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	named := v != "" // a release or pseudo-version names its source
	if v == "" {
		v = "devel"
	}
	vcs := vcsInfo(bi)
	if len(vcs) == 0 && !named {
		vcs = []string{"revision unknown: built without VCS information"}
	}
	if len(vcs) > 0 {
		v += " (" + strings.Join(vcs, ", ") + ")"
	}
	return v + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

// vcsInfo is the commit, its time and "modified", as far as bi has them.
func vcsInfo(bi *debug.BuildInfo) []string {
	if bi == nil {
		return nil
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value
		}
	}
	if rev == "" {
		return nil
	}
	vcs := []string{"commit " + rev[:min(12, len(rev))]}
	if at != "" {
		vcs = append(vcs, at)
	}
	if dirty == "true" {
		vcs = append(vcs, "modified")
	}
	return vcs
}
