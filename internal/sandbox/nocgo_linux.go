//go:build linux && !cgo

package sandbox

// withoutCgo is true in a build without cgo: runtime/cgo cannot be linked,
// so AllThreadsSyscall works (allThreads need not try it first).
const withoutCgo = true
