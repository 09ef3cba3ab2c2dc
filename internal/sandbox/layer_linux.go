package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// layerEnv names, for a child that applies its file-system layer itself
// (after its mounts: BaseForChild), the descriptor it inherited the
// parent's Layer on (LayerForChild); Restrict applies it with its own
// layer and closes it.
const layerEnv = "BROOD_SANDBOX_LAYER"

// BuildLayer makes the Layer that hides paths (files or directories,
// absolute): one ruleset handling READ_FILE, with a read rule on every
// entry around them (addReadRules). Its cost, a rule per entry of each
// directory on the way, is paid here once, not at every child's start.
// It is nil, with no error, when paths is empty or the kernel has no
// Landlock.
func BuildLayer(paths []string) (*Layer, error) {
	if len(paths) == 0 || landlockABI() < 1 {
		return nil, nil
	}
	// REFER (linking or renaming into another directory) is handled by
	// every layer whether it says so or not; a layer granting it nowhere
	// would refuse every cross-directory rename and link in the child's
	// own tree (EXDEV: `git mv`, review22 P2-1). So it handles it and
	// grants it everywhere: the child's own layer still limits it to its
	// writable roots, and the kernel still refuses a move that would gain
	// a right, out of a hidden path.
	handled := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE)
	if landlockABI() >= 2 {
		handled |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	attr := rulesetAttr{handledFS: handled}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return nil, fmt.Errorf("sandbox: landlock_create_ruleset (layer): %w", errno)
	}
	if err := addReadRules(int(fd), paths, unix.LANDLOCK_ACCESS_FS_READ_FILE); err != nil {
		unix.Close(int(fd))
		return nil, err
	}
	if handled&unix.LANDLOCK_ACCESS_FS_REFER != 0 {
		if err := addPathRule(int(fd), "/", unix.LANDLOCK_ACCESS_FS_REFER); err != nil {
			unix.Close(int(fd))
			return nil, err
		}
	}
	return &Layer{f: os.NewFile(fd, "landlock-layer"), paths: paths}, nil
}

// LayerForChild passes l to cmd's child, which applies it itself
// (Restrict, after its mounts: a domain that handles file-system access
// may not mount): an inherited descriptor and the entry that names it.
// The child closes it before it runs anything else; nothing it starts
// holds it.
func LayerForChild(cmd *exec.Cmd, l *Layer) {
	if l == nil || l.f == nil {
		return
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, l.f)
	cmd.Env = append(cmd.Env, layerEnv+"="+strconv.Itoa(2+len(cmd.ExtraFiles)))
}

// takeLayer adds the Layer the parent passed (LayerForChild) to p and
// removes the entry. A descriptor that is not a Landlock ruleset is an
// error: the parent said its children's domain holds the layer.
func takeLayer(p Policy) (Policy, error) {
	v, ok := os.LookupEnv(layerEnv)
	if !ok {
		return p, nil
	}
	os.Unsetenv(layerEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return p, fmt.Errorf("sandbox: %s=%q is not a descriptor number; start the child with sandbox.LayerForChild", layerEnv, v)
	}
	link, err := os.Readlink("/proc/self/fd/" + v)
	if err != nil || link != "anon_inode:[landlock-ruleset]" {
		return p, fmt.Errorf("sandbox: %s names descriptor %d, which is not a Landlock ruleset (%q)", layerEnv, fd, link)
	}
	syscall.CloseOnExec(fd)
	p.Layer = &Layer{f: os.NewFile(uintptr(fd), "landlock-layer")}
	if err := ownProcRule(fd); err != nil {
		return p, fmt.Errorf("sandbox: read rule on its own /proc in the parent's layer: %w", err)
	}
	return p, nil
}

// dropLayer closes a Layer the parent passed to a process that applies
// none (DropMarkers).
func dropLayer() {
	v, ok := os.LookupEnv(layerEnv)
	if !ok {
		return
	}
	os.Unsetenv(layerEnv)
	if link, err := os.Readlink("/proc/self/fd/" + v); err == nil && link == "anon_inode:[landlock-ruleset]" {
		if fd, err := strconv.Atoi(v); err == nil && fd > 2 {
			unix.Close(fd)
		}
	}
}

// restrictLayer applies p's Layer, if any, to the calling thread (under
// no_new_privs already).
func restrictLayer(p Policy) error {
	if p.Layer == nil || p.Layer.f == nil {
		return nil
	}
	if _, _, errno := unix.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, p.Layer.f.Fd(), 0, 0); errno != 0 {
		return fmt.Errorf("sandbox: landlock_restrict_self (layer): %w", errno)
	}
	return nil
}
