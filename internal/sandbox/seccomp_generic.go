//go:build linux && !amd64 && !arm64

package sandbox

const nativeArch = 0

// lastReviewed is unused where no table is known (no filter is installed).
const lastReviewed = 0

// metadataSyscalls is empty where brood does not know the syscall table: a
// read-only child's Status then says metadata is not held by the kernel.
func metadataSyscalls() []int { return nil }

// confinedSyscalls is empty where brood does not know the syscall table.
func confinedSyscalls() []int { return nil }

// modeSyscalls is empty where brood does not know the syscall table.
func modeSyscalls() []modeArg { return nil }

// othersSyscalls is empty where brood does not know the syscall table.
func othersSyscalls() []othersArg { return nil }

// sysvIPCSyscalls is empty where brood does not know the syscall table.
func sysvIPCSyscalls() []int { return nil }
