// Package trust is `brood trust`: the user's consent that a project's own
// files may allow more than brood's defaults — settings (a permission mode,
// allow rules, raised limits, the sandbox off), hooks, .mcp.json servers,
// servers and secrets its agent files ask for. Until then a run uses the
// defaults for those and says so in one line. A grant is keyed to the
// project's directory and the files' content, so any change asks again, and
// lives in the user's config directory (~/.config/brood/trust.json), never
// in the project.
package trust

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/termsafe"
	trustdb "github.com/broodhq/brood/internal/trust"
)

// Options are the verbs of `brood trust`.
type Options struct {
	Factory *cmdutil.Factory
	List    bool
	Revoke  bool
	JSON    bool
	Now     func() time.Time
}

// NewCmdTrust builds `brood trust [--list | --revoke]`.
func NewCmdTrust(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "trust [--list | --revoke]",
		Short: "Trust this project's own files to allow more than brood's defaults",
		Long: `A project's own files may ask for more than brood's defaults: in
.brood/settings.toml and Claude Code's .claude/settings.json a permission
mode such as bypassPermissions, allow rules, a deeper delegation tree, more
concurrency, longer timeouts, the kernel sandbox off, hooks; MCP servers in
.mcp.json; MCP servers and secret variables its agent files ask for. A
cloned repository must not grant itself that, so brood ignores those parts
(and says so, in one line) until you trust the project in its current
state. Any change to those files asks again, and so does the same project
in another directory. Grants live in ~/.config/brood/trust.json, never in
the project.

For CI, --trust-project (any command) or BROOD_TRUST_PROJECT=1 trusts the
project for one run.`,
		Example: `  brood trust            trust this project's files as they are now
  brood trust --list     the projects you trust
  brood trust --revoke   forget this project's grant`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.List && opts.Revoke {
				return cmdutil.UsageError("--list and --revoke do not go together: pick one")
			}
			if runF != nil {
				return runF(opts)
			}
			return trustRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.List, "list", false, "list the trusted projects")
	cmd.Flags().BoolVar(&opts.Revoke, "revoke", false, "revoke the trust of this project")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func trustRun(opts *Options) error {
	f := opts.Factory
	if f.Home == "" {
		return errors.New("HOME is not set: brood keeps its trust records in ~/.config/brood/trust.json")
	}
	store := trustdb.UserStore(f.Home)
	switch {
	case opts.List:
		return listRun(opts, store)
	case opts.Revoke:
		return revokeRun(opts, store)
	}
	return grantRun(opts, store)
}

func grantRun(opts *Options, store trustdb.Store) error {
	f := opts.Factory
	if f.SettingsErr != nil {
		return fmt.Errorf("cannot judge what to trust while a settings file is broken: %w", f.SettingsErr)
	}
	pt := f.Settings.Trust
	out := termsafe.NewWriter(f.Out)
	if len(pt.Widening) == 0 {
		if opts.JSON {
			return cmdutil.WriteJSON(f.Out, map[string]any{"root": f.ProjectRoot, "trusted": false, "reason": "nothing to trust"})
		}
		_, err := fmt.Fprintf(out, "nothing to trust in %s: its files (if any) allow nothing beyond the defaults\n", f.ProjectRoot)
		return err
	}
	if err := store.GrantFiles(pt.Root, pt.Files, opts.Now()); err != nil {
		return err
	}
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, map[string]any{"root": pt.Root, "trusted": true, "hash": pt.Hash, "files": pt.FileNames(), "allows": pt.Widening})
	}
	_, err := fmt.Fprintf(out, "trusted %s (%s): %s\nA change to these files asks again; undo with: brood trust --revoke\n",
		pt.Root, strings.Join(pt.FileNames(), ", "), strings.Join(pt.Widening, "; "))
	return err
}

func listRun(opts *Options, store trustdb.Store) error {
	f := opts.Factory
	recs, err := store.List()
	if err != nil {
		return err
	}
	if opts.JSON {
		if recs == nil {
			recs = []trustdb.Record{}
		}
		return cmdutil.WriteJSON(f.Out, recs)
	}
	out := termsafe.NewWriter(f.Out)
	if len(recs) == 0 {
		_, err := fmt.Fprintln(out, "no trusted projects (", store.Path, ")")
		return err
	}
	for _, r := range recs {
		state := ""
		if r.Root == f.Settings.Trust.Root && f.Settings.Trust.Hash != "" && f.Settings.Trust.Hash != r.Hash {
			state = " (the files changed since: not trusted as they are now)"
			if changed := r.Changed(f.Settings.Trust.Files); len(changed) > 0 {
				state = " (the files changed since: " + strings.Join(changed, ", ") + ": not trusted as they are now)"
			}
		}
		fmt.Fprintf(out, "%s  %s  %s%s\n", r.Granted.Local().Format("2006-01-02 15:04"), r.Root, strings.Join(r.Files, ", "), state)
	}
	return nil
}

func revokeRun(opts *Options, store trustdb.Store) error {
	f := opts.Factory
	root := trustdb.Key(f.ProjectRoot)
	ok, err := store.Revoke(root)
	if err != nil {
		return err
	}
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, map[string]any{"root": root, "revoked": ok})
	}
	if !ok {
		_, err = fmt.Fprintf(termsafe.NewWriter(f.Out), "%s was not trusted\n", root)
		return err
	}
	_, err = fmt.Fprintf(termsafe.NewWriter(f.Out), "revoked the trust of %s: its files no longer allow more than the defaults\n", root)
	return err
}
