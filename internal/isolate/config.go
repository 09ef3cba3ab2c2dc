package isolate

import (
	"fmt"
	"path/filepath"
	"slices"
)

// holdConfig takes the changes to brood's and Claude Code's configuration
// (trust.IsConfigPath, in any case: .brood/ less its records, .claude/, .mcp.json; and
// the files trusted hooks and MCP servers run, Options.Programs) out
// of a child's patch unless the workspace allows them: they are saved on
// their own as config.patch in the task's state directory, for the user to
// review and apply, and named in the outcome. Allowed ones stay in the
// patch and are named too, so nothing changes configuration silently.
// The programs are held whatever the workspace allows: the user's
// agents.allow_config_changes is about the project's configuration, not
// the programs the root runs.
func (w *Workspace) holdConfig(patch []byte, entries []rawEntry, out *Outcome) ([]byte, []rawEntry, error) {
	cfg, rest := map[string]bool{}, map[string]bool{}
	var allowed []string
	for _, e := range entries {
		switch {
		case slices.ContainsFunc(w.programs, func(p string) bool { return foldPath(p) == foldPath(e.path) }):
			cfg[e.path] = true
		case landedConfig(e.path) && w.allowConfig:
			allowed = append(allowed, e.path)
			rest[e.path] = true
		case landedConfig(e.path):
			cfg[e.path] = true
		default:
			rest[e.path] = true
		}
	}
	slices.Sort(allowed)
	allowed = slices.Compact(allowed)
	out.ConfigApplied = allowed
	w.config = ConfigReport{Applied: allowed}
	if len(cfg) == 0 {
		return patch, entries, nil
	}
	names := make([]string, 0, len(cfg))
	for p := range cfg {
		names = append(names, p)
	}
	slices.Sort(names)
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
	w.config = ConfigReport{Refused: names, Patch: out.ConfigPatch, Applied: allowed}
	return kept, keptEntries, nil
}

// ConfigReport is what Finish did with the child's configuration changes.
type ConfigReport struct {
	Refused []string // left out of the patch
	Patch   string   // where the refused changes are kept
	Applied []string // applied, because the workspace allows them
	// Links are the links pointing outside the tree that kept the whole
	// patch out (Outcome.Links).
	Links []Link
}

// Config reports what the last Finish did with configuration changes.
func (w *Workspace) Config() ConfigReport { return w.config }
