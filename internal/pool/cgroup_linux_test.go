package pool

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCgroupTeardown: a child's cgroup, v2 or v1, is removed at its
// child's end whatever it holds: empty (the usual end, one rmdir),
// with a sub-cgroup of the child's own children, with a process left in
// it (killed first), or already gone. The same is what a leftover of an
// earlier run of a task meets before its cgroup is made anew.
func TestCgroupTeardown(t *testing.T) {
	p := New(Config{})
	c := p.containment(t.Context())
	type hier struct {
		name string
		base string
		kill func(string)
		join func(dir string, cmd *exec.Cmd) error // puts a stopped process in dir
	}
	var hs []hier
	if c.mode == ContainCgroup {
		hs = append(hs, hier{"v2", c.base, killCgroup, intoV2})
	}
	for name, b := range map[string]string{"v1 memory": c.lim.memV1, "v1 pids": c.lim.pidsV1} {
		if b != "" {
			hs = append(hs, hier{name, b, killV1, intoV1})
		}
	}
	if len(hs) == 0 {
		t.Skipf("no writable cgroup here (%s)", c.note)
	}
	cases := []struct {
		name         string
		sub, process bool
		missing      bool
		processInSub bool
	}{
		{name: "empty"},
		{name: "sub-cgroup", sub: true},
		{name: "process", process: true},
		{name: "process in a sub-cgroup", sub: true, processInSub: true},
		{name: "missing", missing: true},
	}
	for _, h := range hs {
		for i, tc := range cases {
			t.Run(h.name+"/"+tc.name, func(t *testing.T) {
				dir := filepath.Join(h.base, fmt.Sprintf("teardown-%d-%d", os.Getpid(), i))
				var cmd *exec.Cmd
				if !tc.missing {
					mkCgroup(t, dir)
					if tc.sub {
						mkCgroup(t, filepath.Join(dir, "sub"))
					}
					if tc.process || tc.processInSub {
						where := dir
						if tc.processInSub {
							where = filepath.Join(dir, "sub")
						}
						cmd = exec.Command("sleep", "1000")
						if err := h.join(where, cmd); err != nil {
							t.Fatal(err)
						}
					}
				}
				h.kill(dir)
				if cmd != nil {
					err := cmd.Wait()
					var ee *exec.ExitError
					if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
						t.Errorf("the process left in the cgroup ended with %v, not SIGKILL", err)
					}
				}
				if _, err := os.Lstat(dir); !os.IsNotExist(err) {
					t.Errorf("%s still there after its teardown: %v", dir, err)
				}
			})
		}
	}
}

// mkCgroup makes a cgroup, removed at the test's end if still there.
func mkCgroup(t *testing.T, dir string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = unix.Rmdir(filepath.Join(dir, "sub"))
		_ = unix.Rmdir(dir)
	})
}

// intoV2 starts cmd in the v2 cgroup dir (CLONE_INTO_CGROUP).
func intoV2(dir string, cmd *exec.Cmd) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	return cmd.Start()
}

// intoV1 starts cmd and moves it into the v1 cgroup dir.
func intoV1(dir string, cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	return err
}

// TestPIDNSProbedOnlyWhenNeeded: in cgroup mode the PID-namespace probe
// (a fork and exec) runs only for a child whose cgroup cannot be made,
// which then gets a PID namespace if the probe says it can.
func TestPIDNSProbedOnlyWhenNeeded(t *testing.T) {
	c := New(Config{}).containment(t.Context())
	if c.mode != ContainCgroup {
		t.Skipf("no writable cgroup v2 for this user (%s)", c.note)
	}
	for _, tc := range []struct {
		name   string
		base   string
		probed bool
	}{
		{"cgroup made", c.base, false},
		{"cgroup refused", filepath.Join(t.TempDir(), "missing"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := c
			cc.base, cc.pidns = tc.base, &pidnsProbe{}
			cmd := exec.Command("true")
			cmd.SysProcAttr = &syscall.SysProcAttr{}
			h, err := cc.contain(t.Context(), cmd, fmt.Sprintf("probe-%d", os.Getpid()))
			if err != nil {
				t.Fatal(err)
			}
			if h.fd >= 0 {
				_ = unix.Close(h.fd)
				_ = unix.Rmdir(h.dir)
			}
			if probed := cc.pidns.probes > 0; probed != tc.probed {
				t.Fatalf("probed %v, want %v (hold %s)", probed, tc.probed, h.mode)
			}
			want := ContainCgroup
			if tc.probed {
				want = ContainPIDNS
				if cc.pidns.err != nil {
					want = ContainNone
				}
			}
			if h.mode != want {
				t.Fatalf("hold %s, want %s", h.mode, want)
			}
		})
	}
}
