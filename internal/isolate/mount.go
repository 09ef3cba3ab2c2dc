package isolate

import (
	"context"
	"os"
	"os/exec"
	"slices"
)

// Mount is an overlay prepared by someone else: a fleet worker's copy of a
// submitter's tree (internal/codesnap), whose lower layer is a checkout
// the worker caches and shares between calls. Root is that lower layer,
// which nobody writes while a child lives; Upper and Work belong to one
// child, which mounts them over Root in its own mount namespace (as an
// overlay child of Prepare does): it sees and writes its copy at Root's
// own path, and nothing it writes reaches Root, the worker, or another
// child. The preparer reads the child's change from Upper.
type Mount struct {
	Root, Upper, Work string
	// Dir is where the child starts: Root or a directory beneath it.
	Dir string
	// UserXattr mounts with userxattr (Support.UserXattr).
	UserXattr bool
}

// Configure asks for the child's user and mount namespaces and passes the
// mount in its environment; the child's EnterFromEnv mounts it. Like
// Workspace.Configure, call it after anything that replaces cmd.Env or
// cmd.SysProcAttr wholesale.
//
// writes are the directories the child's Landlock rules let it write
// (WriterWritable; a read-only child's task directory): every other mount
// of its namespace but its copy is read-only (writeOnly),
// so it changes no file's mode, owner, times or extended attributes on
// the worker outside them (the layers' directory is writable only while
// the overlay is mounted: overlayLayers). None: the worker's mounts as they are (a child
// without Landlock). denied are the paths the child's Read deny rules
// match (WriterDenied): covered in its namespace once the overlay is
// mounted.
func (m *Mount) Configure(cmd *exec.Cmd, writes []string, denied ...string) error {
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	if err := addMountNamespace(cmd); err != nil {
		return err
	}
	// The child starts in the lower layer and enters Dir once mounted: a
	// directory only the upper layer has is not there before.
	cmd.Dir = m.Dir
	if _, err := os.Stat(m.Dir); err != nil {
		cmd.Dir = m.Root
	}
	spec := mountSpec{Mode: ModeOverlay, Root: m.Root, Upper: m.Upper, Work: m.Work, Cwd: m.Dir, UserXattr: m.UserXattr, Denied: denied}
	spec.Writes = slices.Clone(writes)
	return spec.pass(cmd)
}

// ProbeIn is Probe with the overlay tried in a scratch directory under dir
// (removed again): whether a child can mount an overlay whose layers live
// on dir's file system (an overlay's upper layer cannot be on every one).
func ProbeIn(ctx context.Context, dir string) Support {
	s := Probe(ctx)
	s.Overlay, s.UserXattr, s.Why = probeOverlayIn(ctx, dir)
	return s
}
