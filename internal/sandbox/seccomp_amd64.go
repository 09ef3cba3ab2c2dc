//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// lastReviewed is the highest syscall number this table was written
// against: a confined child's higher numbers (a newer kernel's calls,
// which may change a file or the mount table in a way no rule here names)
// answer ENOSYS, as on a kernel that lacks them.
const lastReviewed = unix.SYS_FILE_SETATTR

const nativeArch = unix.AUDIT_ARCH_X86_64

func metadataSyscalls() []int {
	return []int{
		unix.SYS_CHMOD, unix.SYS_FCHMOD, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2,
		unix.SYS_CHOWN, unix.SYS_FCHOWN, unix.SYS_LCHOWN, unix.SYS_FCHOWNAT,
		unix.SYS_UTIME, unix.SYS_UTIMES, unix.SYS_FUTIMESAT, unix.SYS_UTIMENSAT,
		unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR, unix.SYS_SETXATTRAT,
		unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR, unix.SYS_REMOVEXATTRAT,
		unix.SYS_FILE_SETATTR, // chattr's flags by path (Linux 6.17), as FS_IOC_FSSETXATTR by fd
	}
}

// confinedSyscalls is what no confined child (read-only or writer) may call:
// changing the mount table (Landlock already refuses it to a domain with
// file-system rules; this holds where the child has no such layer yet),
// loading kernel code, and the kernel's widest attack surfaces.
func confinedSyscalls() []int {
	return []int{
		unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_MOVE_MOUNT,
		unix.SYS_OPEN_TREE, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT,
		unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR, unix.SYS_OPEN_TREE_ATTR,
		unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
		unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
		unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT, unix.SYS_ACCT,
		unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN,
		unix.SYS_IOPL, unix.SYS_IOPERM,
		unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
		// Another process's memory and descriptors (Landlock's ptrace
		// rule holds them too; this is where it does not apply).
		unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_KCMP, unix.SYS_PIDFD_GETFD,
		// The kernel keyrings: the session keyring a child inherits is
		// the user's shell's (Kerberos KEYRING ccaches, keyctl-stored
		// secrets), and a key added there outlives the child (red team
		// 21 P2-3; Docker's default profile denies them too).
		unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	}
}

// othersSyscalls are the calls that change another process's resources
// (othersArg): a confined child's commands make them on themselves only
// (OwnProcessForCommand).
func othersSyscalls() []othersArg {
	return []othersArg{
		{unix.SYS_PRLIMIT64, othersLimit},
		{unix.SYS_SETPRIORITY, othersPrio},
		{unix.SYS_IOPRIO_SET, othersPrio},
	}
}

// modeSyscalls are the calls that take a file mode (modeArg): none may
// carry the set-user-ID or set-group-ID bit in a confined child.
func modeSyscalls() []modeArg {
	return []modeArg{
		{unix.SYS_CHMOD, 1, -1}, {unix.SYS_FCHMOD, 1, -1},
		{unix.SYS_FCHMODAT, 2, -1}, {unix.SYS_FCHMODAT2, 2, -1},
		{unix.SYS_CREAT, 1, -1}, {unix.SYS_OPEN, 2, 1}, {unix.SYS_OPENAT, 3, 2},
		{unix.SYS_MKDIR, 1, -1}, {unix.SYS_MKDIRAT, 2, -1},
		{unix.SYS_MKNOD, 1, -1}, {unix.SYS_MKNODAT, 2, -1},
	}
}

// sysvIPCSyscalls are System V IPC's calls but shmdt: a child in the
// host's IPC namespace (sharedIPCFilter) makes none of them.
func sysvIPCSyscalls() []int {
	return []int{
		unix.SYS_SHMGET, unix.SYS_SHMAT, unix.SYS_SHMCTL,
		unix.SYS_MSGGET, unix.SYS_MSGSND, unix.SYS_MSGRCV, unix.SYS_MSGCTL,
		unix.SYS_SEMGET, unix.SYS_SEMOP, unix.SYS_SEMTIMEDOP, unix.SYS_SEMCTL,
	}
}
