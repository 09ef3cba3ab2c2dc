//go:build linux && cgo

package sandbox

// withoutCgo is false in a build with cgo, which may link runtime/cgo:
// there only trying AllThreadsSyscall (InPlace) tells whether it works.
const withoutCgo = false
