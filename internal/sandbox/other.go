//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"os/exec"
)

// errNotLinux explains every mechanism this package lacks off Linux.
var errNotLinux = errors.New("sandbox: namespaces and Landlock need Linux")

// Probe reports that no kernel mechanism is available.
func Probe(ctx context.Context) Report {
	msg := errNotLinux.Error()
	return Report{Errors: map[string]string{"landlock": msg, "user_namespaces": msg, "network_namespace": msg}}
}

// ProbeUserNS reports that no user namespace is available.
func ProbeUserNS(ctx context.Context) Report { return Probe(ctx) }

// StartsUserNS is false off Linux: no command gets a namespace.
func StartsUserNS(cmd *exec.Cmd) bool { return false }

// TryUserNS fails off Linux.
func TryUserNS(ctx context.Context) error { return errNotLinux }

// UserNSRefused is false off Linux.
func UserNSRefused(err error) bool { return false }

// UserNSLimited is false off Linux.
func UserNSLimited(err error) bool { return false }

// ConfigureNetwork always fails off Linux.
func ConfigureNetwork(cmd *exec.Cmd, rep Report) error { return errNotLinux }

// AddNamespaces does nothing off Linux; callers only reach it after a probe
// said namespaces exist, which never happens here.
func AddNamespaces(cmd *exec.Cmd, flags uintptr, ambient []uintptr) {}

// Restrict records that only the tool layer enforces the policy.
func Restrict(p Policy) (Status, error) {
	if !p.confinesFS() {
		return Status{Mechanism: "none"}, nil
	}
	return Status{Mechanism: "unavailable", Note: "no Landlock off Linux; read-only is enforced by the tool layer only"}, nil
}

// LandlockABI is 0 off Linux.
func LandlockABI() int { return 0 }

// RestrictForChild has nothing to apply off Linux.
func RestrictForChild(p Policy) (string, Status, bool, error) {
	return "", Status{Mechanism: "unavailable", Note: "no kernel sandbox on this platform"}, false, nil
}

// ScopeForChild has nothing to apply off Linux.
func ScopeForChild() (bool, error) { return false, nil }

// OnThrowawayThread runs f on a goroutine of its own off Linux.
func OnThrowawayThread(f func()) { go f() }

// Undumpable has nothing to set off Linux.
func Undumpable() error { return nil }

// StartMapped runs start off Linux.
func StartMapped(cmd *exec.Cmd, start func() error) error { return start() }

// NamespacesOnThread has nothing to raise off Linux.
func NamespacesOnThread(cmd *exec.Cmd) error { return nil }

// NoPtraceForChild has nothing to drop off Linux.
func NoPtraceForChild() error { return nil }

// OwnProcessForCommand has nothing to install off Linux.
func OwnProcessForCommand() error { return nil }

// NoIntrospectionForCommand has nothing to drop off Linux.
func NoIntrospectionForCommand() error { return nil }

// InPlace is false off Linux: there is nothing to restrict.
func InPlace() bool { return false }

// BaseForChild has nothing to apply off Linux.
func BaseForChild(p Policy) (string, error) { return "", nil }

// Reexecuted is false off Linux: Restrict never re-executes there.
func Reexecuted() bool { return false }

// DropMarkers has nothing to drop off Linux.
func DropMarkers() {}

// fill has nothing to record off Linux.
func (s *Status) fill(p Policy, seccomp, capsDropped bool) {}

// HiddenEnv has nothing to pass off Linux.
func HiddenEnv(p Policy) string { return "" }

// FilterAvailable is false off Linux.
func FilterAvailable() bool { return false }

// BuildLayer has no Landlock to build with off Linux.
func BuildLayer(paths []string) (*Layer, error) { return nil, nil }

// LayerForChild has nothing to pass off Linux.
func LayerForChild(cmd *exec.Cmd, l *Layer) {}

// OwnIPC does nothing off Linux.
func OwnIPC(cmd *exec.Cmd) {}

// SharedIPCOnThread has nothing to install off Linux.
func SharedIPCOnThread(cmd *exec.Cmd) error { return nil }
