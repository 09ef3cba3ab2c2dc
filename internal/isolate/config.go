package isolate

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/broodhq/brood/internal/trust"
)

// holdConfig takes the changes to brood's and Claude Code's configuration
// (trust.IsConfigPath: .brood/ less its records, .claude/, .mcp.json; and
// the files trusted hooks and MCP servers run, Options.Programs) out
// of a child's patch unless the workspace allows them: they are saved on
// their own as config.patch in the task's state directory, for the user to
// review and apply, and named in the outcome. Allowed ones stay in the
// patch and are named too, so nothing changes configuration silently.
func (w *Workspace) holdConfig(patch []byte, entries []rawEntry, out *Outcome) ([]byte, []rawEntry, error) {
	cfg, rest := map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		if trust.IsConfigPath(e.path) || slices.Contains(w.programs, e.path) {
			cfg[e.path] = true
		} else {
			rest[e.path] = true
		}
	}
	if len(cfg) == 0 {
		return patch, entries, nil
	}
	names := make([]string, 0, len(cfg))
	for p := range cfg {
		names = append(names, p)
	}
	slices.Sort(names)
	if w.allowConfig {
		out.ConfigApplied = names
		w.config = ConfigReport{Applied: names}
		return patch, entries, nil
	}
	held, _, err := dropFiles(patch, entries, rest)
	if err != nil {
		return nil, nil, err
	}
	kept, keptEntries, err := dropFiles(patch, entries, cfg)
	if err != nil {
		return nil, nil, err
	}
	out.ConfigRefused = names
	out.ConfigPatch = filepath.Join(filepath.Dir(w.state), "config.patch")
	if err := writeAtomic(out.ConfigPatch, held); err != nil {
		return nil, nil, fmt.Errorf("isolate: save the refused configuration changes: %w", err)
	}
	w.config = ConfigReport{Refused: names, Patch: out.ConfigPatch}
	return kept, keptEntries, nil
}

// ConfigReport is what Finish did with the child's configuration changes.
type ConfigReport struct {
	Refused []string // left out of the patch
	Patch   string   // where the refused changes are kept
	Applied []string // applied, because the workspace allows them
}

// Config reports what the last Finish did with configuration changes.
func (w *Workspace) Config() ConfigReport { return w.config }
