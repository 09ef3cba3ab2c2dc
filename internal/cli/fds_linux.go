package cli

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/sandbox"
)

// HoldInheritedFDs marks every descriptor above stderr that this process
// inherited close-on-exec, so that no process it starts (a subagent, a
// hook, an MCP server, git) is handed one: Go's os/exec closes nothing,
// and Landlock does not govern a descriptor that is already open, so a
// file a shell or an editor left open on brood (`brood run … 7<secret`)
// would be every confined child's to read. Descriptors brood hands a
// child on purpose go through exec.Cmd's ExtraFiles, which places its
// own copies. Run by a root only: a child's inherited descriptors are the
// ones its parent chose, and it may still re-execute itself with them.
//
// It also makes the root non-dumpable (sandbox.Undumpable), as every
// child already is: a root holds the provider keys it was started with,
// and /proc/PID/environ keeps them whatever its tools' environment
// leaves out, so its own Bash (a direct child, same uid, started without
// CAP_SYS_PTRACE: sandbox.StartCommand) read them from
// /proc/$PPID/environ, and its memory from /proc/$PPID/mem (red team 21
// P2-8). Its /proc/PID files become root's: other processes of the user
// still read its cmdline, stat, status and cgroup (brood tasks, kill,
// crash restore), and it leaves no core.
func HoldInheritedFDs() {
	_ = sandbox.Undumpable()
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return
	}
	// Before Linux 5.11 (no CLOSE_RANGE_CLOEXEC): one by one.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}
