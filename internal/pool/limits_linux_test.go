package pool

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/limits"
)

// limitChildEnv makes the test binary one of the limit tests' children
// (before TestMain, so pool_test.go's children are untouched).
const limitChildEnv = "POOL_LIMIT_CHILD"

func init() {
	switch os.Getenv(limitChildEnv) {
	case "":
		return
	case "hog":
		// The leader lives; a process it starts takes memory until the
		// kernel stops it.
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), limitChildEnv+"=leaf-hog")
		_ = c.Start()
		pingForever()
	case "leaf-hog":
		var keep [][]byte
		for {
			b := make([]byte, 8<<20)
			for i := range b {
				b[i] = 1
			}
			keep = append(keep, b)
		}
	case "forks":
		for {
			if err := exec.Command("sleep", "1000").Start(); err != nil {
				pingForever()
			}
		}
	case "idle":
		pingForever()
	case "reserve":
		// Address space taken and never touched (the kernel hands out
		// zero pages on first use): only RLIMIT_AS stops it, at once.
		var keep [][]byte
		for {
			keep = append(keep, make([]byte, 64<<20))
		}
	case "fail":
		fmt.Fprintln(os.Stderr, "failed for its own reasons")
		os.Exit(3)
	}
	os.Exit(100)
}

func pingForever() {
	for {
		fmt.Println(`{"ping":true}`)
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLimitsStopTheChild: a child whose grandchild takes more memory than
// its limit, or which starts more processes than its limit, is killed as a
// whole, and its Output names the limit; a child within its limits has its
// open-file limit set.
func TestLimitsStopTheChild(t *testing.T) {
	for _, mode := range containModes(t) {
		for _, c := range []struct {
			child string
			lim   limits.Set
			want  string
		}{
			{"hog", limits.Set{Memory: 96 << 20}, "memory limit of 96 MiB"},
			{"forks", limits.Set{Processes: 40}, "process limit of 40"},
		} {
			t.Run(mode+"/"+c.child, func(t *testing.T) {
				p := New(Config{KillGrace: 300 * time.Millisecond, HeartbeatTimeout: time.Hour, Containment: mode})
				how := ProbeLimits(t.Context(), mode)
				key := map[string]string{"hog": "memory", "forks": "processes"}[c.child]
				if strings.HasPrefix(how[key], "nothing") || strings.HasPrefix(how[key], "rlimit") {
					t.Fatalf("this machine holds no %s limit in a cgroup (%s): the suite expects one (cgroup v2 or v1 controllers)", key, how[key])
				}
				j, _ := job(t, c.child, limitChildEnv+"="+c.child)
				j.Limits = c.lim
				ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
				defer cancel()
				out, err := j.run(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if ctx.Err() != nil {
					t.Fatalf("the child was not stopped by its limit (%s): ran until the test's timeout", how[key])
				}
				if out.KilledBy != c.want || out.Signal != "killed" {
					t.Fatalf("killed by %q (signal %q), want %q", out.KilledBy, out.Signal, c.want)
				}
				if open := openEventsFiles(t); len(open) > 0 {
					t.Fatalf("the child's events files are still open after its end: %q", open)
				}
			})
		}
	}
}

// TestLimitsSetOnTheChild: the child runs in cgroups holding its limits and
// with its open-file limit, from before it runs anything of its own.
func TestLimitsSetOnTheChild(t *testing.T) {
	p := New(Config{KillGrace: 300 * time.Millisecond, HeartbeatTimeout: time.Hour})
	j, _ := job(t, "idle", limitChildEnv+"=idle")
	j.Limits = limits.Set{Memory: 300 << 20, Processes: 77, Files: 123}
	ctx, cancel := context.WithCancel(t.Context())
	seen := make(chan string, 1)
	j.OnStart = func(pid int) {
		lim, _ := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
		cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		seen <- string(lim) + "\n" + string(cg) + "\n" + cgroupLimits(string(cg))
		cancel()
	}
	if _, err := j.run(ctx, p); err != nil {
		t.Fatal(err)
	}
	got := <-seen
	for _, want := range []string{"Max open files            123                  123", "mem=314572800", "pids=77"} {
		if !strings.Contains(got, want) {
			t.Errorf("the child's limits do not show %q:\n%s", want, got)
		}
	}
}

// cgroupLimits reads the memory and pids limits of the cgroups a
// /proc/PID/cgroup lists, v2 and v1.
func cgroupLimits(procCgroup string) string {
	var out []string
	for _, line := range strings.Split(procCgroup, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0":
			if mnt, err := CgroupMount(); err == nil {
				out = append(out, readLimit("mem", filepath.Join(mnt, parts[2], "memory.max")), readLimit("pids", filepath.Join(mnt, parts[2], "pids.max")))
			}
		case parts[1] == "memory":
			if mnt, err := v1Mount("memory"); err == nil {
				out = append(out, readLimit("mem", filepath.Join(mnt, parts[2], "memory.limit_in_bytes")))
			}
		case parts[1] == "pids":
			if mnt, err := v1Mount("pids"); err == nil {
				out = append(out, readLimit("pids", filepath.Join(mnt, parts[2], "pids.max")))
			}
		}
	}
	return strings.Join(out, " ")
}

func readLimit(name, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return name + "=" + strings.TrimSpace(string(b))
}

// TestEventCount reads the counters a breach is measured by, in v2's and
// v1's files.
func TestEventCount(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		file, body, key string
		want            int64
	}{
		{"memory.events", "low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n", "oom_kill", 1},
		{"memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", "oom_kill", 3},
		{"pids.events", "max 40\n", "max", 40},
		{"absent", "", "max", 0},
	} {
		path := filepath.Join(dir, c.file)
		if c.body != "" {
			if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := eventCount(path, c.key); got != c.want {
			t.Errorf("%s: %d, want %d", c.file, got, c.want)
		}
	}
	// breach compares with the counters at the start.
	v2 := t.TempDir()
	os.WriteFile(filepath.Join(v2, "memory.events"), []byte("oom_kill 0\n"), 0o644)
	os.WriteFile(filepath.Join(v2, "pids.events"), []byte("max 0\n"), 0o644)
	lf := limitFiles{lim: limits.Set{Memory: 2 << 30, Processes: 300}, memDir: v2, pidsDir: v2}
	lf.oomBase, lf.pBase = lf.counters()
	if b := lf.breach(); b != "" {
		t.Fatalf("breach before any event: %q", b)
	}
	os.WriteFile(filepath.Join(v2, "pids.events"), []byte("max 1\n"), 0o644)
	if b := lf.breach(); b != "process limit of 300" {
		t.Errorf("breach = %q", b)
	}
	os.WriteFile(filepath.Join(v2, "memory.events"), []byte("oom_kill 1\n"), 0o644)
	if b := lf.breach(); b != "memory limit of 2 GiB" {
		t.Errorf("breach = %q", b)
	}
}

// TestSetV2 writes memory.max and pids.max into a v2 cgroup directory
// (here a plain one: the files are what the kernel reads).
func TestSetV2(t *testing.T) {
	dir := t.TempDir()
	l := limiter{memV2: true, pidsV2: true}
	lf := limitFiles{lim: limits.Set{Memory: 1 << 30, Processes: limits.Unlimited}}
	if err := l.setV2(&lf, dir); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{"memory.max": "1073741824", "memory.swap.max": "0", "pids.max": "max"} {
		if b, _ := os.ReadFile(filepath.Join(dir, file)); string(b) != want {
			t.Errorf("%s = %q, want %q", file, b, want)
		}
	}
	if lf.memDir != dir || lf.pidsDir != dir {
		t.Errorf("limit files not recorded: memory %q, pids %q", lf.memDir, lf.pidsDir)
	}
}

// TestMakeV1LeavesOutWhatItCannotMake: a v1 cgroup that cannot be made (a
// sandboxed child may not write its own) is left out, not an error: the
// child stays in its parent's cgroup, whose limit holds it.
func TestMakeV1LeavesOutWhatItCannotMake(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "gone")
	l := limiter{memV1: gone, pidsV1: gone}
	lf := limitFiles{lim: limits.Set{Memory: 1 << 30, Processes: 100}}
	l.makeV1(&lf, "job-1")
	if len(lf.v1) != 0 || lf.memDir != "" || lf.pidsDir != "" {
		t.Fatalf("made %q (memory %q, pids %q) under a directory that does not exist", lf.v1, lf.memDir, lf.pidsDir)
	}
	if lf.breach() != "" {
		t.Fatal("a breach without counters")
	}
}

// TestFailedStartLeavesNoV1Cgroup: a child whose start fails (its binary
// is gone) leaves none of the v1 cgroups made for its limits behind. The
// throw-away thread it was to be cloned from had joined them (v1 places
// threads), so the first rmdir could find them busy.
func TestFailedStartLeavesNoV1Cgroup(t *testing.T) {
	p := New(Config{KillGrace: 300 * time.Millisecond, HeartbeatTimeout: time.Hour})
	c := p.containment(t.Context())
	if c.lim.memV1 == "" && c.lim.pidsV1 == "" {
		t.Skip("no v1 memory or pids controller here: nothing of v1 to leave behind")
	}
	for i := range 20 {
		marker := depth.Marker{Task: fmt.Sprintf("01FAILEDSTART%013d", i), Depth: 1, Max: 1}
		j, _ := job(t, "idle")
		j.Cmd = exec.Command(filepath.Join(t.TempDir(), "no-such-brood"))
		j.Marker, j.Limits = marker, limits.Set{Memory: 300 << 20, Processes: 77}
		if _, err := j.run(t.Context(), p); err == nil {
			t.Fatal("a child with no binary started")
		}
		for _, base := range []string{c.lim.memV1, c.lim.pidsV1} {
			if base == "" {
				continue
			}
			if _, err := os.Lstat(filepath.Join(base, marker.String())); err == nil {
				t.Fatalf("start %d: the failed start left %s", i, filepath.Join(base, marker.String()))
			}
		}
	}
}

// rlimitOnly makes p hold its children by rlimits alone, as on a machine
// with neither v2 nor v1 memory and pids controllers.
func rlimitOnly(p *Pool) {
	p.containOnce.Do(func() { p.contain = containment{mode: ContainNone, lim: limiter{}} })
}

// TestRlimitOnlyNamesTheLimit: where no cgroup holds a child's memory, its
// RLIMIT_AS does; a child that runs out of it ends with the limit named
// and marked as an rlimit's ("memory limit of 512 MiB (rlimit)"), as a
// cgroup's breach is named. A child that fails for another reason is not
// blamed on a limit.
func TestRlimitOnlyNamesTheLimit(t *testing.T) {
	for _, c := range []struct {
		child, want string
	}{
		{"reserve", "memory limit of 512 MiB (rlimit)"},
		{"fail", KilledByNone},
	} {
		t.Run(c.child, func(t *testing.T) {
			p := New(Config{KillGrace: 300 * time.Millisecond, HeartbeatTimeout: time.Hour})
			rlimitOnly(p)
			j, _ := job(t, c.child, limitChildEnv+"="+c.child)
			j.Limits = limits.Set{Memory: 512 << 20, Files: 256}
			out, err := j.run(t.Context(), p)
			if err != nil {
				t.Fatal(err)
			}
			if out.KilledBy != c.want || out.ExitCode == 0 {
				t.Fatalf("killed by %q (exit %d), want %q\n%s", out.KilledBy, out.ExitCode, c.want, out.StderrTail)
			}
			if c.want != KilledByNone && !LimitKill(out.KilledBy) {
				t.Errorf("LimitKill(%q) = false", out.KilledBy)
			}
		})
	}
}

// openEventsFiles lists the cgroup events files this process holds open
// (the limits watch's, counters_linux.go).
func openEventsFiles(t *testing.T) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var open []string
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, "/sys/fs/cgroup/") && (strings.HasSuffix(target, ".events") || strings.HasSuffix(target, "oom_control")) {
			open = append(open, target)
		}
	}
	return open
}
