package cmdutil

import (
	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/settings"
)

// DepthFlags are HooCode's nesting flags, on brood run and the interactive
// mode: --max-subagent-depth N sets the tree-wide cap (maxSubagentDepth)
// for this run, and --enable-subagents is its shorthand for 2 (the root's
// children may delegate once more). A flag is the user's own word, so it
// beats every settings file; it only decides at a root: below a child the
// cap its parent stamped holds whatever a command line says (package depth).
type DepthFlags struct {
	Max    int
	Enable bool
	cmd    *cobra.Command
}

// EnableSubagentsDepth is the cap --enable-subagents sets.
const EnableSubagentsDepth = 2

// Bind adds the flags to cmd.
func (d *DepthFlags) Bind(cmd *cobra.Command) {
	d.cmd = cmd
	f := cmd.Flags()
	f.IntVar(&d.Max, "max-subagent-depth", 0, "the tree-wide nesting cap for this run (maxSubagentDepth; default from settings: 1, the root delegates and its children do not)")
	f.BoolVar(&d.Enable, "enable-subagents", false, "let the root's children delegate once more: --max-subagent-depth 2")
}

// Apply sets f's settings from the flags that were given, with the flag as
// the value's origin (brood config shows it).
func (d *DepthFlags) Apply(f *Factory) error {
	set := d.cmd != nil && d.cmd.Flags().Changed("max-subagent-depth")
	switch {
	case set && d.Max < 0:
		return UsageError("--max-subagent-depth %d is negative: use 0 to turn delegation off, 1 (the default) to let the root delegate", d.Max)
	case set && d.Enable && d.Max < EnableSubagentsDepth:
		return UsageError("--enable-subagents means --max-subagent-depth %d, and --max-subagent-depth %d says less: give one of them", EnableSubagentsDepth, d.Max)
	case set:
		f.Settings.MaxSubagentDepth = d.Max
		d.origin(f, "max-subagent-depth")
	case d.Enable:
		if f.Settings.MaxSubagentDepth < EnableSubagentsDepth {
			f.Settings.MaxSubagentDepth = EnableSubagentsDepth
			d.origin(f, "enable-subagents")
		}
	}
	return nil
}

func (d *DepthFlags) origin(f *Factory, flag string) {
	if f.Resolved != nil && f.Resolved.Origins != nil {
		f.Resolved.Origins["maxSubagentDepth"] = settings.Origin{Source: "flag", Flag: flag}
	}
}
