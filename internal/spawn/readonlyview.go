package spawn

import (
	"os/exec"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/taskdir"
)

// holdReadOnly holds a read-only child of the root in its own read-only
// mount view (isolate.HoldReadOnly); a child's own children and a fleet
// worker's keep the metadata filter. It reports true when the envelope got
// a note (no user namespaces).
func (d *Dispatcher) holdReadOnly(cmd *exec.Cmd, env *dispatch.Envelope, td *taskdir.Dir, userNS bool) (bool, error) {
	if d.cfg.Depth > 0 || d.cfg.Mount != nil {
		// A child's children share its view and may not mount; a fleet
		// worker's children mount its copy.
		return false, nil
	}
	note, err := isolate.HoldReadOnly(cmd, env, td.Path(), d.policyBase(), userNS)
	if note != "" {
		env.Notes = append(env.Notes, note)
	}
	return note != "", err
}
