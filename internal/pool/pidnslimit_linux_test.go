package pool

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/sandbox"
)

// envLimitCase runs TestPIDNSLimitSettlesNothing's case in its helper
// process.
const envLimitCase = "POOL_TEST_PIDNS_LIMIT"

// TestPIDNSLimitSettlesNothing: a pool held by PID namespaces whose probe
// meets a namespace limit (max_pid_namespaces reached: any process of the
// user can use it up) does not fall to no containment for its life: the
// child started while the limit holds fails with the limit's sentence
// (not started with less), and once the limit frees the next child is the
// init of a PID namespace of its own. Each case runs in a helper process
// that is root of a user namespace of its own, where it sets the limits.
func TestPIDNSLimitSettlesNothing(t *testing.T) {
	if !sandbox.ProbeUserNS(context.Background()).UserNS {
		t.Skip("needs user namespaces")
	}
	cases := []struct{ name, want string }{
		{"pidns", ContainPIDNS},
		{"auto without a cgroup", "auto"},
	}
	if name := os.Getenv(envLimitCase); name != "" {
		for _, c := range cases {
			if c.name == name {
				limitCase(t, c.want)
				return
			}
		}
		t.Fatalf("no case %q", name)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestPIDNSLimitSettlesNothing$", "-test.v")
			cmd.Env = append(os.Environ(), envLimitCase+"="+c.name)
			sandbox.AddNamespaces(cmd, syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS, []uintptr{24 /* CAP_SYS_RESOURCE */, 21 /* CAP_SYS_ADMIN */})
			cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if strings.Contains(out.String(), "--- SKIP") {
				t.Skipf("%s", out.String())
			}
			if err != nil || !strings.Contains(out.String(), "--- PASS: TestPIDNSLimitSettlesNothing") {
				t.Fatalf("case %s: %v\n%s", c.name, err, out.String())
			}
		})
	}
}

// limitCase is one case, in its helper process: want is the pool's
// Containment.
func limitCase(t *testing.T, want string) {
	limit := func(n string) {
		for _, f := range []string{"/proc/sys/user/max_pid_namespaces", "/proc/sys/user/max_user_namespaces"} {
			if err := os.WriteFile(f, []byte(n+"\n"), 0o644); err != nil {
				t.Skipf("cannot set this user namespace's limits: %v", err)
			}
		}
	}
	if want == "auto" {
		// No cgroup v2 here: a /sys/fs/cgroup without one, in this
		// process's own mount namespace (nothing propagates out of it).
		if err := syscall.Mount("none", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
			t.Skipf("cannot make the mounts private: %v", err)
		}
		if err := syscall.Mount("none", "/sys/fs/cgroup", "tmpfs", 0, ""); err != nil {
			t.Skipf("cannot hide the cgroups: %v", err)
		}
	}
	limit("0")
	p := New(Config{KillGrace: 300 * time.Millisecond, HeartbeatTimeout: time.Hour, Containment: want})
	mode, note := p.Containment(t.Context())
	if mode != ContainPIDNS || !strings.Contains(note, "got no answer") {
		t.Fatalf("containment %s (%s), want %s, the probe's lack of an answer said", mode, note, ContainPIDNS)
	}
	j, _ := job(t, "pid")
	if _, err := j.run(t.Context(), p); err == nil || !strings.Contains(err.Error(), "limit is reached") {
		t.Fatalf("a child started at the limit: %v, want refused with the limit's sentence", err)
	}
	limit("100")
	j, lines := job(t, "pid")
	if _, err := j.run(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if len(*lines) != 1 || !strings.Contains((*lines)[0], `"pid":1}`) {
		t.Fatalf("the child once the limit freed said %q, want the init of a PID namespace", *lines)
	}
	if p.contain.pidns.probes != 3 {
		t.Errorf("probed %d times, want 3 (the pool's, the refused child's, the next one's)", p.contain.pidns.probes)
	}
}

// TestPIDNSProbeRunsNoProgramOfPATH: the PID-namespace probe starts this
// program's no-op start (sandbox.ProbeCommand), never a `true` found on
// PATH: here one early on PATH that leaves a mark.
func TestPIDNSProbeRunsNoProgramOfPATH(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	if err := os.WriteFile(filepath.Join(dir, "true"), []byte("#!/bin/sh\necho ran >> '"+mark+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err := tryPIDNS(t.Context()); err != nil {
		t.Skipf("no PID namespace here: %v", err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatalf("the probe ran the `true` on PATH (%s)", filepath.Join(dir, "true"))
	}
}

// TestPIDNSProbeSettlesOnlyTheKernelsAnswer: the probe's answer is kept
// for the pool's life only when it is the kernel's: a clean start (yes) or
// a start refused as there being no namespace (EPERM, EACCES, EINVAL, or
// a Landlock domain that keeps this process from writing id maps: no).
// A fork that found no process or memory left, a limit, or the probe
// itself dying fails the child that asked, with no weaker containment, and
// the next child asks again.
func TestPIDNSProbeSettlesOnlyTheKernelsAnswer(t *testing.T) {
	start := func(e error) error { return &os.PathError{Op: "fork/exec", Path: "/proc/self/exe", Err: e} }
	died := exec.Command("sh", "-c", "kill -9 $$").Run() // a real probe's death: *exec.ExitError
	if died == nil {
		t.Fatal("sh survived its own SIGKILL")
	}
	for _, tc := range []struct {
		name    string
		err     error
		hold    string // "": the start fails
		failsAs string
		probes  int // after two children
	}{
		{"yes", nil, ContainPIDNS, "", 1},
		{"refused: EPERM", start(syscall.EPERM), ContainNone, "", 1},
		{"refused: EINVAL", start(syscall.EINVAL), ContainNone, "", 1},
		{"a confined process that may not write id maps", sandbox.ErrIDMapsRefused, ContainNone, "", 1},
		{"a read-only /proc: EROFS", start(syscall.EROFS), ContainNone, "", 1},
		{"no process left: EAGAIN", start(syscall.EAGAIN), "", "did not get the kernel's answer", 2},
		{"no memory: ENOMEM", start(syscall.ENOMEM), "", "did not get the kernel's answer", 2},
		{"the probe died", died, "", "did not get the kernel's answer", 2},
		{"a limit: ENOSPC", start(syscall.ENOSPC), "", "limit is reached", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probe := &pidnsProbe{try: func(context.Context) error { return tc.err }}
			c := containment{mode: ContainPIDNS, pidns: probe}
			for range 2 {
				cmd := exec.Command("true")
				cmd.SysProcAttr = &syscall.SysProcAttr{}
				h, err := c.contain(t.Context(), cmd, "probe-test")
				switch {
				case tc.hold == "" && (err == nil || !strings.Contains(err.Error(), tc.failsAs)):
					t.Fatalf("contain: hold %v, error %v; want the start failed saying %q", h, err, tc.failsAs)
				case tc.hold != "" && err != nil:
					t.Fatalf("contain: %v", err)
				case tc.hold != "" && h.mode != tc.hold:
					t.Fatalf("hold %s, want %s", h.mode, tc.hold)
				}
			}
			if probe.probes != tc.probes {
				t.Errorf("probed %d times for two children, want %d", probe.probes, tc.probes)
			}
		})
	}
}
