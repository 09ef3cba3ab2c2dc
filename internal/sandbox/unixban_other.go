//go:build !linux

package sandbox

// NoUnixSocketsForCommand has no means off Linux, where no child is
// confined by the kernel either: the command runs with what it has.
func NoUnixSocketsForCommand() (string, error) { return "", nil }
