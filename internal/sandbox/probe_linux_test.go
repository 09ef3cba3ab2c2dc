package sandbox

import (
	"fmt"
	"os"
	"syscall"
	"testing"
)

// TestProbeUserNSAgrees: the dispatcher's probe (user namespaces alone)
// gives the answer the full Probe gives, and says nothing of a network
// namespace it did not try.
func TestProbeUserNSAgrees(t *testing.T) {
	full, alone := Probe(t.Context()), ProbeUserNS(t.Context())
	if alone.UserNS != full.UserNS || alone.LandlockABI != full.LandlockABI {
		t.Fatalf("ProbeUserNS = %+v, Probe = %+v", alone, full)
	}
	if alone.NetNS {
		t.Fatal("ProbeUserNS reports a network namespace it never tried")
	}
	if _, ok := alone.Errors["user_namespaces"]; ok == alone.UserNS {
		t.Fatalf("UserNS %v with errors %v", alone.UserNS, alone.Errors)
	}
}

// TestUserNSRefusedOrLimited: a limit reached (ENOSPC, EUSERS) is never
// read as the kernel having no user namespaces (EPERM, EACCES, EINVAL),
// and neither is anything but a failed fork/exec.
func TestUserNSRefusedOrLimited(t *testing.T) {
	start := func(e error) error { return &os.PathError{Op: "fork/exec", Path: "/bin/true", Err: e} }
	cases := []struct {
		name             string
		err              error
		refused, limited bool
	}{
		{"EPERM", start(syscall.EPERM), true, false},
		{"EACCES", start(syscall.EACCES), true, false},
		{"EINVAL", start(syscall.EINVAL), true, false},
		{"ENOSPC", start(syscall.ENOSPC), false, true},
		{"EUSERS", start(syscall.EUSERS), false, true},
		{"wrapped ENOSPC", fmt.Errorf("start: %w", start(syscall.ENOSPC)), false, true},
		{"ENOENT", start(syscall.ENOENT), false, false},
		{"not a start", &os.PathError{Op: "open", Path: "x", Err: syscall.EPERM}, false, false},
		{"nil", nil, false, false},
	}
	for _, c := range cases {
		if got := UserNSRefused(c.err); got != c.refused {
			t.Errorf("%s: UserNSRefused = %v, want %v", c.name, got, c.refused)
		}
		if got := UserNSLimited(c.err); got != c.limited {
			t.Errorf("%s: UserNSLimited = %v, want %v", c.name, got, c.limited)
		}
	}
}
