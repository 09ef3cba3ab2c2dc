//go:build !linux

package cli

// HoldInheritedFDs is Linux's (fds_linux.go); elsewhere brood confines no
// child, and inherited descriptors are left as they are.
func HoldInheritedFDs() {}
