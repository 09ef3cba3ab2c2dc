package delegate

import (
	"context"
	"os/exec"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/taskdir"
)

// holdReadOnly gives a read-only child its own mount namespace with every
// mount read-only but its own directories (isolate.ConfigureReadOnly), so
// that it may set times and modes in its TMPDIR (touch, cp -p, tar x)
// while the mounts keep it from changing any other file's metadata. Where
// that cannot be had (a child's own children, a fleet worker's, no user
// namespaces), the child keeps the syscall filter that denies every
// metadata call, its TMPDIR's included; without user namespaces the
// envelope says so, and holdReadOnly reports true.
func (d *Dispatcher) holdReadOnly(ctx context.Context, cmd *exec.Cmd, env *dispatch.Envelope, td *taskdir.Dir) (bool, error) {
	if d.cfg.Depth > 0 || d.cfg.Mount != nil || sandbox.LandlockABI() < 1 || !sandbox.FilterAvailable() {
		// A child's children share its view and may not mount; a fleet
		// worker's children mount its copy.
		return false, nil
	}
	if !d.sandboxReport(ctx).UserNS {
		env.Notes = append(env.Notes, "no user namespaces here: the read-only child's metadata calls (chmod, utimes) are denied in its TMPDIR too")
		return true, nil
	}
	pol, _ := childPolicy(env, resolvedTaskDir(td.Path()), d.childBase())
	return false, isolate.ConfigureReadOnly(cmd, pol.Writable)
}
