package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// TestProbeRunsNoProgramOfPATH: the namespace probes (the user namespace
// alone, and Probe's network namespace) start this program's no-op start,
// never a `true` found on PATH, which a repository's or a user's
// directory early on PATH could hold: here one that leaves a mark.
func TestProbeRunsNoProgramOfPATH(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	fake := "#!/bin/sh\necho ran >> '" + mark + "'\n"
	if err := os.WriteFile(filepath.Join(dir, "true"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, tc := range []struct {
		name  string
		probe func() Report
	}{
		{"user namespace", func() Report { return ProbeUserNS(t.Context()) }},
		{"all", func() Report { return Probe(t.Context()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.probe()
			if !r.UserNS {
				t.Skipf("no user namespaces here: %v", r.Errors)
			}
			if _, err := os.Stat(mark); err == nil {
				t.Fatalf("the probe ran the `true` on PATH (%s)", filepath.Join(dir, "true"))
			}
		})
	}
}

// TestOnlyAProbeExitsAtInit: the no-op start is a process named
// brood-probe with no arguments and BROOD_SANDBOX_PROBE=1; the variable
// alone (a user's or a child's environment), or the name alone, is a
// brood run to do something.
func TestOnlyAProbeExitsAtInit(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want bool
	}{
		{"the probe", []string{"brood-probe"}, "1", true},
		{"the variable alone", []string{"brood", "run", "x"}, "1", false},
		{"the variable, a child's command line", []string{"brood-child", "--mode", "json"}, "1", false},
		{"the name alone", []string{"brood-probe"}, "", false},
		{"the name with arguments", []string{"brood-probe", "run"}, "1", false},
		{"another value", []string{"brood-probe"}, "yes", false},
	} {
		getenv := func(k string) string {
			if k == probeEnv {
				return tc.env
			}
			return ""
		}
		if got := isProbe(tc.args, getenv); got != tc.want {
			t.Errorf("%s: isProbe(%q, %q) = %v, want %v", tc.name, tc.args, tc.env, got, tc.want)
		}
	}
	// And a real start with the variable alone runs: this test binary
	// lists its tests instead of exiting at init.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.list=^TestOnlyAProbeExitsAtInit$")
	cmd.Env = append(os.Environ(), probeEnv+"=1")
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "TestOnlyAProbeExitsAtInit") {
		t.Fatalf("a start with %s=1 alone: %v, %q: want it to run", probeEnv, err, out)
	}
}
