// Package config is `brood config`: the effective settings and where each
// value came from (flag, env, project, user, default), one key, and the
// files brood reads.
package config

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/settings"
)

// NewCmdConfig builds `brood config` and its verbs.
func NewCmdConfig(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use: "config",
		Example: `  brood config list
  brood config get model
  brood config path`,
		Short: "Show the effective settings and where each value came from",
		Long: `Show brood's effective settings. Each value comes from, highest first:
a flag, the environment (BROOD_*), .brood/settings.local.toml,
.brood/settings.toml, .claude/settings.local.json and .claude/settings.json,
~/.config/brood/settings.toml, ~/.claude/settings.json, or the default.

From a Claude Code settings.json brood takes permissions (allow, deny,
ask; defaultMode as permissions.mode; additionalDirectories as
--add-dir's), model, env and hooks. In a project, what its files allow
beyond the layers below (allow rules, a wider mode, model, env,
additionalDirectories, hooks, raised limits) waits until you trust the
project (brood trust); their deny and ask rules apply at once.
Permission lists add up across files; a deny anywhere wins.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdList(f, nil), NewCmdGet(f, nil), NewCmdPath(f, nil))
	return cmd
}

// Flags are the run flags `config list` and `config get` take, to show
// what a run given them would use.
type Flags struct {
	Model    string
	Effort   string
	PermMode string
	MaxTurns int
	Depth    cmdutil.DepthFlags
}

func (fl *Flags) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&fl.Model, "model", "", "as brood run --model")
	f.Var(cmdutil.NewEnum(&fl.Effort, "", "low", "medium", "high", "xhigh", "max"), "effort", "as brood run --effort")
	f.Var(cmdutil.NewEnum(&fl.PermMode, "", "default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"), "permission-mode", "as brood run --permission-mode")
	f.IntVar(&fl.MaxTurns, "max-turns", 0, "as brood run --max-turns")
	fl.Depth.Bind(cmd) // as brood run --max-subagent-depth, --enable-subagents
}

// entry is one key of the effective settings.
type entry struct {
	Key    string          `json:"key"`
	Value  any             `json:"value"`
	Origin settings.Origin `json:"origin"`
	// Held is the project's own value when the trust gate held it back
	// (the effective value is then the one below it), and why.
	Held *settings.Held `json:"held,omitempty"`
}

// entries are the effective settings with the flags applied on top.
func entries(f *cmdutil.Factory, fl Flags) ([]entry, error) {
	if err := fl.Depth.Apply(f); err != nil {
		return nil, err
	}
	s := f.Settings
	origins := map[string]settings.Origin{}
	if f.Resolved != nil {
		for k, v := range f.Resolved.Origins {
			origins[k] = v
		}
	}
	for _, x := range []struct {
		key, flag string
		set       bool
		apply     func()
	}{
		{"model", "model", fl.Model != "", func() { s.Model = fl.Model }},
		{"effort", "effort", fl.Effort != "", func() { s.Effort = fl.Effort }},
		{"permissions.mode", "permission-mode", fl.PermMode != "", func() { s.Permissions.Mode = fl.PermMode }},
		{"max_turns", "max-turns", fl.MaxTurns > 0, func() { s.MaxTurns = fl.MaxTurns }},
	} {
		if x.set {
			x.apply()
			origins[x.key] = settings.Origin{Source: "flag", Flag: x.flag}
		}
	}
	var out []entry
	for _, k := range settings.Keys() {
		v, _ := s.Value(k)
		o, ok := origins[k]
		if !ok {
			o = settings.Origin{Source: "default"}
		}
		e := entry{Key: k, Value: v, Origin: o}
		if f.Resolved != nil {
			if h, ok := f.Resolved.Held[k]; ok {
				e.Held = &h
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// heldText is the line that says a project value was held back.
func heldText(h *settings.Held) string {
	return fmt.Sprintf("%s sets %s, %s", h.Origin, valueText(h.Value), h.Why)
}
