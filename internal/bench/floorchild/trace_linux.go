package main

import (
	"syscall"
	"unsafe"
)

// monotonic is CLOCK_MONOTONIC in nanoseconds (brood's spawn traces'
// clock; 0 if unreadable), from the standard library alone.
func monotonic() int64 {
	var ts syscall.Timespec
	const clockMonotonic = 1
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return ts.Nano()
}
