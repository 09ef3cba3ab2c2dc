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
	Version string // set with -ldflags; "dev" when not
}

// NewCmdVersion builds `brood version`; version is the -ldflags version.
func NewCmdVersion(f *cmdutil.Factory, version string, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f, Version: version}
	return &cobra.Command{
		Use:   "version",
		Short: "Print brood's version, the commit it was built from and the Go version",
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
	_, err := fmt.Fprintln(opts.Factory.Out, "brood", String(opts.Version))
	return err
}

// String is the version line after "brood ": the -ldflags version, else
// the module version `go install` recorded, then the commit, its time and
// whether the tree was modified, and the Go version and platform.
func String(ldflags string) string {
	v := ldflags
	bi, ok := debug.ReadBuildInfo()
	if ok && (v == "" || v == "dev") && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	if v == "" {
		v = "dev"
	}
	var vcs []string
	if ok {
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
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			vcs = append(vcs, "commit "+rev)
		}
		if at != "" {
			vcs = append(vcs, at)
		}
		if dirty == "true" {
			vcs = append(vcs, "modified")
		}
	}
	if len(vcs) > 0 {
		v += " (" + strings.Join(vcs, ", ") + ")"
	}
	return v + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}
