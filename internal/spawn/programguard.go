package spawn

import (
	"fmt"
	"strings"

	"github.com/broodhq/brood/internal/trust"
)

// The files that trusted hooks and MCP servers run (trust.Grant.Held: a
// hook's ./scripts/guard.sh) are held back like configuration: the root
// would run them unconfined, so a child that writes in place gets its
// change to them undone and reported, as for .claude/ (an isolated child's
// patch leaves them out: isolate.Options.Programs). The user's
// agents.allow_config_changes gives a writer the project's configuration,
// not these: the root runs them, and a PreToolUse hook's script rewritten
// while a child asks for it could race its pin check.

const programsWhy = "a subagent may not change a file that your trusted hooks or MCP servers run (the project's trust covers its content); change it yourself, and trust the project again"

// watchPrograms snapshots the held files beside the configuration (the
// caller holds cfgMu, and g.err is the configuration snapshot's).
func (g *configGuard) watchPrograms() {
	held := g.d.cfg.Grant.Held()
	if g.err != nil || len(held) == 0 {
		return
	}
	g.progs, g.err = trust.SnapshotFiles(g.root, held)
}

// undoPrograms puts back what the child changed of the held files, and
// says so, agents.allow_config_changes or not.
func (g *configGuard) undoPrograms() []string {
	if g.progs == nil {
		return nil
	}
	changed, err := g.progs.Changes()
	switch {
	case err != nil:
		return []string{"files your hooks run not checked after the run (" + err.Error() + "): check " + strings.Join(g.d.cfg.Grant.Held(), ", ") + " yourself"}
	case len(changed) == 0:
		return nil
	}
	failed, err := g.progs.Restore(changed)
	line := fmt.Sprintf("configuration changes refused and undone: %s — %s", strings.Join(changed, ", "), programsWhy)
	if len(failed) > 0 || err != nil {
		line += fmt.Sprintf(". NOT undone (check them yourself): %s %v", strings.Join(failed, ", "), errText(err))
	}
	return []string{line}
}
