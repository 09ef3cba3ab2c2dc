package spawn

import (
	"fmt"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/limits"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
)

// childLimits are what a child of def may consume: the settings' limits
// under the definition's own. A project definition the user has not
// trusted may lower them, never raise them (a cloned repository does not
// grant itself the machine); the note says what was held back.
func (d *Dispatcher) childLimits(def *registry.Definition) (limits.Set, string) {
	base, err := d.cfg.Settings.Limits.Child()
	if err != nil {
		base = limits.Defaults() // settings.Load refused it already
	}
	if def.Source == registry.SourceProject && !d.trusts(def.Path) {
		got, raised := base.Lower(def.Limits)
		if len(raised) == 0 {
			return got, ""
		}
		return got, fmt.Sprintf("limits %s not raised: %s is a project file, and the project is not trusted (run `brood trust`, or set them in [limits]); %s apply",
			strings.Join(raised, ", "), def.Path, got)
	}
	return base.Over(def.Limits), ""
}

// childNetwork is whether a child's tool processes (Bash and all it
// starts) may use the network: the definition's `network:`, else none for
// a read-only built-in (explore, plan: they read code, they need no
// network), else on. The child's own connection to its model is never cut.
func childNetwork(def *registry.Definition, readOnly bool) *bool {
	if def.Network != nil {
		return def.Network
	}
	if def.Source == registry.SourceBuiltin && readOnly {
		off := false
		return &off
	}
	return nil
}

// settingsLimits are the limits the settings give a child (a warm child's:
// the definition it will serve adds none, or it is not served warm).
func settingsLimits(s settings.Settings) limits.Set {
	l, err := s.Limits.Child()
	if err != nil {
		return limits.Defaults()
	}
	return l
}

// childRunLimits are the timeout and turns a child of def runs with: the
// definition's own (`timeout:`, `maxTurns:`) over the settings'. A project
// definition the root's grant does not cover may lower them, never raise
// them (the same raise in the project's settings waits for trust); the
// note says what was held back.
func (d *Dispatcher) childRunLimits(def *registry.Definition) (time.Duration, int, string) {
	s := d.cfg.Settings
	timeout, maxTurns := s.Pool.TimeoutFor(def.Name), s.MaxTurns
	untrusted := def.Source == registry.SourceProject && !d.trusts(def.Path)
	var held []string
	if def.Timeout > 0 {
		if untrusted && timeout > 0 && def.Timeout > timeout {
			held = append(held, fmt.Sprintf("timeout %s (%s applies)", def.Timeout, timeout))
		} else {
			timeout = def.Timeout
		}
	}
	if def.MaxTurns > 0 {
		if untrusted && maxTurns > 0 && def.MaxTurns > maxTurns {
			held = append(held, fmt.Sprintf("maxTurns %d (%d applies)", def.MaxTurns, maxTurns))
		} else {
			maxTurns = def.MaxTurns
		}
	}
	if len(held) == 0 {
		return timeout, maxTurns, ""
	}
	return timeout, maxTurns, fmt.Sprintf("%s not raised: %s is a project file, and the project is not trusted (run `brood trust`, or set them in your settings)",
		strings.Join(held, ", "), def.Path)
}
