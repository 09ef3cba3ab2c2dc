package pool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/limits"
)

// limiter is how a pool holds its children to their limits, decided once
// per pool: the memory and pids controllers of cgroup v2 in the subtree
// children's cgroups are made in, else those of cgroup v1 (a hybrid
// machine binds them there), else rlimits only.
type limiter struct {
	memV2, pidsV2 bool   // the v2 base's children get memory.max / pids.max
	memV1, pidsV1 string // v1 directories children's cgroups are made in
	notes         []string
}

// probeLimiter looks for the controllers. base is the v2 directory
// children's cgroups are made in ("" when there is none).
func probeLimiter(base string) limiter {
	var l limiter
	if base != "" {
		l.memV2, l.pidsV2 = enableV2(base)
	}
	if !l.memV2 {
		dir, err := v1Base("memory")
		l.memV1 = dir
		if err != nil {
			l.notes = append(l.notes, "no memory controller: "+err.Error())
		}
	}
	if !l.pidsV2 {
		dir, err := v1Base("pids")
		l.pidsV1 = dir
		if err != nil {
			l.notes = append(l.notes, "no pids controller: "+err.Error())
		}
	}
	for _, dir := range []string{l.memV1, l.pidsV1} {
		if dir != "" {
			sweepStale(dir) // what a parent killed with SIGKILL left
		}
	}
	return l
}

// enableV2 turns the memory and pids controllers on for base's children
// where base has them (brood's own subtree; a nested brood's base holds
// its own process, so the kernel refuses there, and the limits of its own
// cgroup already hold its whole subtree).
func enableV2(base string) (mem, pids bool) {
	have := func() string {
		b, _ := os.ReadFile(filepath.Join(base, "cgroup.subtree_control"))
		return " " + strings.TrimSpace(string(b)) + " "
	}
	avail, _ := os.ReadFile(filepath.Join(base, "cgroup.controllers"))
	on := have()
	for _, c := range []string{"memory", "pids"} {
		if strings.Contains(" "+string(avail)+" ", " "+c+" ") && !strings.Contains(on, " "+c+" ") {
			_ = os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+"+c), 0)
		}
	}
	on = have()
	return strings.Contains(on, " memory "), strings.Contains(on, " pids ")
}

// v1Base is the directory under the v1 hierarchy of controller that a
// pool makes its children's cgroups in: this process's own v1 cgroup when
// it is itself a brood child (its children nest in it), else a "brood"
// directory beneath its own v1 cgroup.
func v1Base(controller string) (string, error) {
	mnt, err := v1Mount(controller)
	if err != nil {
		return "", err
	}
	own, err := ownV1Cgroup(controller)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(mnt, own)
	if _, ok := depth.Parse(own); !ok {
		dir = filepath.Join(dir, cgroupBaseName)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("create %s: %w", dir, err)
		}
	}
	if err := unix.Access(filepath.Join(dir, "cgroup.procs"), unix.W_OK); err != nil {
		return "", fmt.Errorf("%s is not writable by this user: %w", dir, err)
	}
	return dir, nil
}

// v1Mount finds where the v1 hierarchy holding controller is mounted.
func v1Mount(controller string) (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, opts := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(opts) < 3 || opts[0] != "cgroup" || fields[3] != "/" {
			continue
		}
		for _, o := range strings.Split(opts[2], ",") {
			if o == controller {
				return fields[4], nil
			}
		}
	}
	return "", fmt.Errorf("neither cgroup v2 nor v1 offers the %s controller here", controller)
}

// ownV1Cgroup is this process's path in the v1 hierarchy of controller.
func ownV1Cgroup(controller string) (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == controller {
				return parts[2], nil
			}
		}
	}
	return "", fmt.Errorf("this process is in no v1 %s cgroup", controller)
}

// how says, for brood doctor, what holds each limit.
func (l limiter) how(mode string) map[string]string {
	out := map[string]string{"files": "rlimit (RLIMIT_NOFILE) on the child, inherited by all it starts", "file_size": "rlimit (RLIMIT_FSIZE) on the child, inherited by all it starts: each file, not the total"}
	switch {
	case l.memV2 && mode == ContainCgroup:
		out["memory"] = "cgroup v2 memory.max on the child's cgroup"
	case l.memV1 != "":
		out["memory"] = "cgroup v1 memory.limit_in_bytes under " + l.memV1
	default:
		out["memory"] = "rlimit (RLIMIT_AS, per process: twice the limit, at least 4 GiB): no memory controller, so not a total"
	}
	switch {
	case l.pidsV2 && mode == ContainCgroup:
		out["processes"] = "cgroup v2 pids.max on the child's cgroup"
	case l.pidsV1 != "":
		out["processes"] = "cgroup v1 pids.max under " + l.pidsV1
	case os.Getuid() != 0:
		out["processes"] = "rlimit (RLIMIT_NPROC, per user): no pids controller"
	default:
		out["processes"] = "nothing: no pids controller, and root ignores RLIMIT_NPROC"
	}
	out["output"] = "the Bash tool: each spill keeps a head and a tail, all spills of a child within the limit"
	return out
}

// limitFiles are the files one child's limits live in: its v2 cgroup (set
// before the clone) and its v1 cgroups (joined just after the start).
type limitFiles struct {
	lim            limits.Set
	memDir         string // where memory events are read (v2 or v1 dir)
	memV1          bool
	pidsDir        string
	v1             []string // v1 cgroups made for the child
	oomBase, pBase int64    // the counters when the child started
	// memEvents and pidsEvents are memDir's and pidsDir's events files,
	// kept open while the child runs (counters_linux.go).
	memEvents, pidsEvents counterFile
	// entered: the thread the child was cloned from was in every v1
	// cgroup of v1 (onThread), so the child was born in them.
	entered bool
}

// setV2 writes the child's memory and pids limits into its v2 cgroup dir.
func (l limiter) setV2(lf *limitFiles, dir string) error {
	if l.memV2 && lf.lim.Memory != 0 {
		if err := writeLimit(dir, "memory.max", lf.lim.Memory); err != nil {
			return err
		}
		// What goes to swap is memory too.
		_ = os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0)
		lf.memDir = dir
	}
	if l.pidsV2 && lf.lim.Processes != 0 {
		if err := writeLimit(dir, "pids.max", lf.lim.Processes); err != nil {
			return err
		}
		lf.pidsDir = dir
	}
	return nil
}

// makeV1 makes the child's v1 cgroups (for what v2 does not hold) and
// writes their limits; the thread it is cloned from joins them. One that
// cannot be made (a sandboxed brood child may not write its own v1
// cgroup) is left out: the child then stays in its parent's v1 cgroup,
// whose limit holds it together with its parent.
func (l limiter) makeV1(lf *limitFiles, name string) {
	if lf.memDir == "" && l.memV1 != "" && lf.lim.Memory != 0 {
		if dir, ok := limitedDir(filepath.Join(l.memV1, name), "memory.limit_in_bytes", lf.lim.Memory); ok {
			_ = writeLimit(dir, "memory.memsw.limit_in_bytes", lf.lim.Memory)
			lf.v1 = append(lf.v1, dir)
			lf.memDir, lf.memV1 = dir, true
		}
	}
	if lf.pidsDir == "" && l.pidsV1 != "" && lf.lim.Processes != 0 {
		if dir, ok := limitedDir(filepath.Join(l.pidsV1, name), "pids.max", lf.lim.Processes); ok {
			lf.v1 = append(lf.v1, dir)
			lf.pidsDir = dir
		}
	}
}

// limitedDir makes a v1 cgroup with one limit written, or nothing.
func limitedDir(dir, file string, v int64) (string, bool) {
	if _, err := freshDir(dir); err != nil {
		return "", false
	}
	if writeLimit(dir, file, v) != nil {
		_ = unix.Rmdir(dir)
		return "", false
	}
	return dir, true
}

// freshDir makes dir, first removing a leftover of an earlier run of the
// same task (its processes are killed: they belonged to that run).
func freshDir(dir string) (string, error) {
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, os.ErrExist) {
		killV1(dir)
		err = os.Mkdir(dir, 0o755)
	}
	if err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	return dir, nil
}

func writeLimit(dir, file string, v int64) error {
	s := "max"
	if v != limits.Unlimited {
		s = strconv.FormatInt(v, 10)
	} else if strings.HasPrefix(file, "memory.") && strings.HasSuffix(file, "_in_bytes") {
		s = "-1"
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(s), 0); err != nil {
		return fmt.Errorf("set %s: %w", filepath.Join(dir, file), err)
	}
	return nil
}

// onThread wraps a launch's thread hook: the thread the child is cloned
// from first joins the child's v1 cgroups (v1 places threads, not only
// processes), so the child is born in them, as CLONE_INTO_CGROUP does for
// v2: nothing it starts, however early, is outside. The thread is thrown
// away after the start.
func (h *hold) onThread(next func() error) func() error {
	if len(h.lf.v1) == 0 {
		return next
	}
	return func() error {
		// "0" is the writing thread itself: the kernel moves it without
		// taking cgroup_threadgroup_rwsem for writing, which a thread id
		// makes it take (and, the first time after a quiet spell, wait an
		// RCU grace period for: 5-16 ms here, against 0.1 ms).
		for _, dir := range h.lf.v1 {
			if err := os.WriteFile(filepath.Join(dir, "tasks"), []byte("0"), 0); err != nil {
				return fmt.Errorf("enter the child's cgroup %s: %w", dir, err)
			}
		}
		h.lf.entered = true // read after the start returned (launch's errc)
		if next == nil {
			return nil
		}
		return next()
	}
}

// join sets the started child's rlimits, and moves it into its v1
// cgroups unless the thread it was cloned from had put it there already
// (onThread; always, for a start through launch): each move takes the
// kernel's cgroup_threadgroup_rwsem for writing, which holds up every
// fork on the machine while sixteen children start at once. The child is
// brood's own binary, which starts nothing before it has read its
// envelope, so no process of its escapes a move.
func (l limiter) join(lf *limitFiles, pid int, ownUserNS bool) error {
	for _, dir := range lf.v1 {
		if lf.entered {
			break
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("move the child into %s: %w", dir, err)
		}
	}
	return setRlimits(pid, lf.lim, lf.memDir == "", lf.pidsDir == "", ownUserNS)
}

// setRlimits sets the child's open-file limit, and where no cgroup holds
// memory or processes, the per-process rlimits that come nearest.
//
// RLIMIT_NPROC counts the processes of a user in a user namespace: a child
// in a namespace of its own (the PID-namespace fallback of a non-root
// brood) is counted alone, exactly; otherwise the user's other processes
// count too, and the limit is raised by as many.
func setRlimits(pid int, lim limits.Set, noMem, noPids, ownUserNS bool) error {
	set := func(res int, v uint64) error {
		// Never above what the child already has: raising a hard limit
		// needs CAP_SYS_RESOURCE, which a nested parent (a child of a
		// child, itself under these limits) does not hold.
		var old unix.Rlimit
		if err := unix.Prlimit(pid, res, nil, &old); err == nil && old.Max < v {
			v = old.Max
		}
		r := unix.Rlimit{Cur: v, Max: v}
		if err := unix.Prlimit(pid, res, &r, nil); err != nil {
			return fmt.Errorf("prlimit %d on the child: %w", res, err)
		}
		return nil
	}
	if lim.Files > 0 {
		if err := set(unix.RLIMIT_NOFILE, uint64(lim.Files)); err != nil {
			return err
		}
	}
	if lim.FileSize > 0 {
		if err := set(unix.RLIMIT_FSIZE, uint64(lim.FileSize)); err != nil {
			return err
		}
	}
	if noMem && lim.Memory > 0 {
		if err := set(unix.RLIMIT_AS, uint64(addressSpace(lim.Memory))); err != nil {
			return err
		}
	}
	if noPids && lim.Processes > 0 && os.Getuid() != 0 {
		n := lim.Processes
		if !ownUserNS {
			n += userTasks(os.Getuid())
		}
		if err := set(unix.RLIMIT_NPROC, uint64(n)); err != nil {
			return err
		}
	}
	return nil
}

// addressSpace is the RLIMIT_AS that stands in for a memory limit where no
// cgroup holds one: twice the limit, and never under 4 GiB, since a Go
// program (brood's child itself, the go command, the compiler) reserves
// far more address space than it uses and would not start under less.
func addressSpace(memory int64) int64 { return max(2*memory, 4<<30) }

// userTasks counts uid's processes and threads (what RLIMIT_NPROC counts
// outside a user namespace of the child's own).
func userTasks(uid int) int64 {
	ents, _ := os.ReadDir("/proc")
	var n int64
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var mine bool
		var threads int64
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				f := strings.Fields(v)
				mine = len(f) > 0 && f[0] == strconv.Itoa(uid)
			} else if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			}
		}
		if mine {
			n += threads
		}
	}
	return n
}

// counters reads the memory cgroup's OOM kills and the pids cgroup's
// refused forks.
func (lf *limitFiles) counters() (oom, refused int64) {
	if lf.memDir != "" {
		file := "memory.events"
		if lf.memV1 {
			file = "memory.oom_control"
		}
		oom = lf.memEvents.count(filepath.Join(lf.memDir, file), "oom_kill")
	}
	if lf.pidsDir != "" {
		refused = lf.pidsEvents.count(filepath.Join(lf.pidsDir, "pids.events"), "max")
	}
	return oom, refused
}

// closeCounters closes the events files for good, before the child's
// cgroups are removed.
func (lf *limitFiles) closeCounters() {
	lf.memEvents.close()
	lf.pidsEvents.close()
}

// breach names the limit the child has hit since it started ("" = none).
func (lf *limitFiles) breach() string {
	oom, refused := lf.counters()
	switch {
	case oom > lf.oomBase:
		return "memory limit of " + limits.Format("memory", lf.lim.Memory)
	case refused > lf.pBase:
		return "process limit of " + limits.Format("processes", lf.lim.Processes)
	}
	return ""
}

// rlimitSigns are what a process prints when an rlimit, not a cgroup,
// refused it: Go's runtime and libc's messages for each limit.
var rlimitSigns = map[string][]string{
	"memory":    {"out of memory", "cannot allocate memory"},
	"processes": {"failed to create new os thread", "resource temporarily unavailable"},
	"files":     {"too many open files"},
}

// rlimitBreach names the limit that ended a child held by rlimits alone
// (no cgroup counts for it), read from the end of its stderr: a child that
// failed with the message of a limit only an rlimit holds ended by that
// limit ("memory limit of 4 GiB (rlimit)"). "" when none fits.
func (h *hold) rlimitBreach(stderrTail string) string {
	lf, tail := &h.lf, strings.ToLower(stderrTail)
	says := func(key string) bool {
		for _, s := range rlimitSigns[key] {
			if strings.Contains(tail, s) {
				return true
			}
		}
		return false
	}
	switch {
	case lf.memDir == "" && lf.lim.Memory > 0 && lf.lim.Memory != limits.Unlimited && says("memory"):
		return "memory limit of " + limits.Format("memory", lf.lim.Memory) + " (rlimit)"
	case lf.pidsDir == "" && lf.lim.Processes > 0 && lf.lim.Processes != limits.Unlimited && os.Getuid() != 0 && says("processes"):
		return "process limit of " + limits.Format("processes", lf.lim.Processes) + " (rlimit)"
	case lf.lim.Files > 0 && lf.lim.Files != limits.Unlimited && says("files"):
		return "open-file limit of " + limits.Format("files", lf.lim.Files) + " (rlimit)"
	}
	return ""
}

// eventCount reads "key N" from a cgroup events file (0 if absent).
func eventCount(path, key string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return countIn(b, key)
}

// removeV1 kills what is left in the child's v1 cgroups and removes them.
func (lf *limitFiles) removeV1() {
	for _, dir := range lf.v1 {
		killV1(dir)
	}
}

// killV1 kills every process of a v1 cgroup and of the cgroups below it
// (v1 has no cgroup.kill) until none is left, then removes them. A
// removal that succeeds first (no process, no sub-cgroup) is the end.
func killV1(dir string) {
	if err := unix.Rmdir(dir); err == nil || errors.Is(err, unix.ENOENT) {
		return
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			killV1(filepath.Join(dir, e.Name()))
		}
	}
	for range 100 {
		pids := othersIn(dir)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		waitV1Empty(dir)
	}
	if err := unix.Rmdir(dir); errors.Is(err, unix.EBUSY) {
		// Still busy with one of our own threads: the throw-away thread a
		// child was to be cloned from joined the cgroup, and after a
		// failed start it has not exited yet (it is on its way out).
		waitOwnThreadsGone(dir)
		_ = unix.Rmdir(dir)
	}
}

// waitOwnThreadsGone polls a v1 cgroup's tasks until none of them is a
// thread of this process (bounded: a thread that stays is left, and with
// it the directory, which sweepStale removes at a later start).
func waitOwnThreadsGone(dir string) {
	deadline := time.Now().Add(2 * time.Second)
	wait := 100 * time.Microsecond
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join(dir, "tasks"))
		if err != nil {
			return
		}
		ours := false
		for _, f := range strings.Fields(string(b)) {
			if _, err := os.Lstat("/proc/self/task/" + f); err == nil {
				ours = true
				break
			}
		}
		if !ours {
			return
		}
		time.Sleep(wait)
		wait = min(2*wait, 20*time.Millisecond)
	}
}

// othersIn lists the processes of a v1 cgroup but this one. This process
// is never killed here: the throwaway thread a child was cloned from joined
// the child's v1 cgroups (v1 places threads), and until that thread has
// exited, cgroup.procs lists our own pid (a SIGKILL here once killed brood
// itself, seen as a flake under load).
func othersIn(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 && pid != self {
			out = append(out, pid)
		}
	}
	return out
}

// waitV1Empty polls a v1 cgroup until it has no process left (they were
// sent SIGKILL; the bound only keeps a stuck process from hanging us).
func waitV1Empty(dir string) {
	deadline := time.Now().Add(2 * time.Second)
	wait := 100 * time.Microsecond
	for time.Now().Before(deadline) {
		if len(othersIn(dir)) == 0 {
			return
		}
		time.Sleep(wait)
		wait = min(2*wait, 20*time.Millisecond)
	}
}

// limited reports whether a cgroup counts this child's memory or processes.
func (h *hold) limited() bool { return h.lf.memDir != "" || h.lf.pidsDir != "" }

// ProbeLimits says how a pool of this process (containment want, as in
// Config.Containment) would hold a child to each limit (memory, processes,
// files, output): what enforces it on this machine, or that nothing does.
// brood doctor prints it.
func ProbeLimits(ctx context.Context, want string) map[string]string {
	c := probeContainment(ctx, want)
	return c.lim.how(c.mode)
}
