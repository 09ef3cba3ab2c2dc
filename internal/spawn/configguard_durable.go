package spawn

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/trust"
)

// The guard's snapshot on disk (P1-4 of redteam19). What the kernel cannot
// hold for an in-place writer (a .git/commondir it plants, a hook, a
// rebase todo with exec) is put back by its parent's guard when the child
// ends; a root that dies first (kill -9, a crash, a power cut) never runs
// it, and the user's next `git status` would run the child's program. So a
// root writes what its guard must put back — the project's configuration
// and the repository's git configuration, nested ones' too — to its own
// records before the child starts (guards/<task id>.<pid>.json, sealed,
// synced, tmp+rename: out of every child's reach), and removes it once the
// guard settled. The next brood in the project (RestoreCrashedGuards: run,
// the interactive mode, subagent, tasks) puts back a record whose root and
// child are both gone, and says so.

// guardsDir is the directory of guard records in a records directory.
const guardsDir = "guards"

// guardSealKind is the seal's kind of a guard record (taskdir.Seal).
const guardSealKind = "guard"

// maxGuardRecord bounds a guard record read back: a larger file is not
// read (a repository's junk would cost every command its reading).
const maxGuardRecord = 1 << 20

// guardRecordVersion is the version of guard records this build writes.
const guardRecordVersion = 2

// guardRecord is an in-place writer's guard as written to disk.
type guardRecord struct {
	Version int    `json:"version"`
	TaskID  string `json:"task_id"`
	Project string `json:"project"` // the project root the guard watched
	Owner   procID `json:"owner"`   // the root process whose guard it is
	// Child is the writer's process, once started: a record is put back
	// only when it is gone too (a child whose root died winds down on its
	// own, and could write again until it has).
	Child *procID `json:"child,omitempty"`
	// Cgroup is the child's own cgroup v2 directory, once started (cgroup
	// containment): what it started lives on there after the root's
	// death, and is killed before anything is put back. In pidns mode the
	// child is the namespace's init: the kernel ended the rest with it.
	Cgroup string `json:"cgroup,omitempty"`
	// Boot is the kernel's boot id when the record was written: after a
	// reboot no pid or start time in it names a process (start times
	// count from boot), and nothing of its root's survived.
	Boot string `json:"boot,omitempty"`
	// States are what to put back; on disk they are in Enc, encrypted
	// (configguard_enc.go: .git/config can hold credentials). A record an
	// earlier brood wrote has them here in the clear.
	States []trust.StateRecord `json:"states,omitempty"`
	Enc    []byte              `json:"enc,omitempty"`
	Seal   string              `json:"seal,omitempty"`
}

// procID is a process by its pid and its start time in /proc (pid reuse).
type procID struct {
	PID   int    `json:"pid"`
	Start string `json:"start"`
}

func procOf(pid int) procID { return procID{PID: pid, Start: procStart(pid)} }

// alive reports whether the process still runs (a zombie has ended).
func (p procID) alive() bool {
	if p.PID <= 0 || p.Start == "" {
		return false
	}
	state, start := procStat(p.PID)
	return start == p.Start && state != "Z" && state != "X"
}

// bootID is this boot's id (/proc/sys/kernel/random/boot_id), "" when
// unknown.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// rebooted reports whether rec was written before this boot: nothing its
// root or child ran still runs.
func (rec *guardRecord) rebooted() bool {
	now := bootID()
	return rec.Boot != "" && now != "" && rec.Boot != now
}

func procStart(pid int) string { _, start := procStat(pid); return start }

// procStat is a process's state and start time (fields 3 and 22 of
// /proc/PID/stat); "" when there is no such process.
func procStat(pid int) (state, start string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", ""
	}
	return f[0], f[19]
}

// durableDir is where this dispatcher keeps its guards' records: its
// project's own records (sealed, hidden from every child) — "" for a
// subagent's dispatcher, whose in-place children are below its own
// parent's guard, which covers them.
func (d *Dispatcher) durableDir() string {
	if d.cfg.Owners == nil || !d.cfg.Owners.Sealed() {
		return ""
	}
	return filepath.Join(d.cfg.Owners.Path(), guardsDir)
}

// persist writes (or rewrites) the guard's record. Call it with cfgMu held
// once the snapshots are taken, before the child starts; again when the
// child started (its pid) and when the user's own writes were taken in.
// A record that cannot be written leaves the guard as it was (the run's
// end still puts back) and is said on stderr.
func (g *configGuard) persist() {
	dir := g.d.durableDir()
	if dir == "" || g.id == "" || g.err != nil {
		return
	}
	rec := guardRecord{Version: guardRecordVersion, TaskID: g.id, Project: g.root, Owner: procOf(os.Getpid()), Child: g.child, Cgroup: g.cgroup, Boot: bootID()}
	for _, c := range []*trust.ConfigState{g.before, g.git, g.nestedCfg} {
		if r, ok := c.Record(); ok {
			rec.States = append(rec.States, r)
		}
	}
	if len(rec.States) == 0 {
		return
	}
	err := writeGuardRecord(dir, &rec)
	if err == nil {
		g.recorded = filepath.Join(dir, guardRecordName(rec))
		return
	}
	if errors.Is(err, errGuardTooBig) && g.child == nil {
		// Before the child starts: it is not started (unkept).
		g.unkept = fmt.Errorf("task %s: its configuration guard cannot be kept in %s (%v): a brood killed while this in-place subagent ran would leave .git and .brood as it made them, so it is not started; run it isolated (isolation: worktree) or shrink what it keeps, largest first: %s", g.id, dir, err, guardBulk(rec.States))
		return
	}
	if g.d.cfg.Stderr != nil && !g.warned {
		g.warned = true
		fmt.Fprintf(g.d.cfg.Stderr, "brood: %s: what task %s's guard must put back is not kept on disk (%v): should brood die before the subagent ends, check .git and .brood yourself\n", dir, g.id, err)
	}
}

// refusal is why the child may not start: its guard's record could not be
// kept (persist), so the crash story would not hold for it; nil when it
// may.
func (g *configGuard) refusal() error {
	if g == nil {
		return nil
	}
	g.d.cfgMu.Lock()
	defer g.d.cfgMu.Unlock()
	return g.unkept
}

// started notes the child's process in the guard's record.
func (g *configGuard) started(pid int) {
	if g == nil || g.recorded == "" {
		return
	}
	g.d.cfgMu.Lock()
	defer g.d.cfgMu.Unlock()
	p := procOf(pid)
	g.child = &p
	g.cgroup = childCgroup(pid, g.id)
	g.persist()
}

// forget removes the guard's record: it settled, or its child never started.
func (g *configGuard) forget() {
	if g.recorded != "" {
		_ = os.Remove(g.recorded)
		g.recorded = ""
	}
}

func guardRecordName(r guardRecord) string { return fmt.Sprintf("%s.%d.json", r.TaskID, r.Owner.PID) }

// errGuardTooBig: a guard's record would be larger than the next brood
// reads back (maxGuardRecord).
var errGuardTooBig = errors.New("the record is too large to keep")

// writeGuardRecord encrypts rec's states, seals it and writes it into dir
// (0700, the file 0600), synced, tmp+rename, through no link. rec is left
// as it was.
func writeGuardRecord(dir string, in *guardRecord) error {
	key, err := taskdir.RecordKey()
	if err != nil {
		return err
	}
	rec := *in
	rec.Seal = ""
	if err := sealStates(key, &rec); err != nil {
		return err
	}
	data, err := json.Marshal(&rec)
	if err != nil {
		return err
	}
	rec.Seal = taskdir.Seal(key, guardSealKind, data)
	if data, err = json.Marshal(&rec); err != nil {
		return err
	}
	if len(data) > maxGuardRecord {
		return fmt.Errorf("%w: it would be %d bytes, over the %d the next brood reads back", errGuardTooBig, len(data), maxGuardRecord)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	name := guardRecordName(rec)
	tmp := "." + name + ".tmp-" + taskdir.NewID()
	f, err := root.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return nil
}

// openGuardRecord opens one record of dir, through no link: a regular
// file of at most maxGuardRecord bytes.
func openGuardRecord(dir, name string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, taskdir.ErrNotRegular)
	} else if st.Size() > maxGuardRecord {
		f.Close()
		return nil, fmt.Errorf("%s: larger than %d bytes: not read", name, maxGuardRecord)
	}
	return f, nil
}

// decodeGuardRecord reads a record opened by openGuardRecord and checks
// its seal: a record brood did not write for this user (a repository can
// commit .brood/records) is never acted on.
func decodeGuardRecord(f *os.File) (*guardRecord, error) {
	data, err := io.ReadAll(io.LimitReader(f, maxGuardRecord))
	if err != nil {
		return nil, err
	}
	var rec guardRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, err
	}
	seal := rec.Seal
	rec.Seal = ""
	plain, err := json.Marshal(&rec)
	if err != nil {
		return nil, err
	}
	key, err := taskdir.RecordKey()
	if err != nil || !taskdir.SealHolds(key, guardSealKind, plain, seal) {
		return nil, taskdir.ErrNotYours
	}
	if err := openStates(key, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// RestoreCrashedGuards puts back what the guard of an in-place writer
// whose root died before the writer ended must put back (see above): for
// each record in the project's records whose root is gone, what the child
// still runs is killed (its cgroup, or its PID namespace through its
// init: configguard_procs_linux.go), the configuration that changed since
// the snapshot is put back, and the record removed. It returns one line
// for each record it acted on, for stderr. Nothing pending costs one
// directory read.
func RestoreCrashedGuards(projectRoot string) []string {
	dir := filepath.Join(taskdir.Open(projectRoot).Records().Path(), guardsDir)
	var lines []string
	for _, name := range guardRecordNames(dir) {
		lines = append(lines, restoreCrashed(projectRoot, dir, name)...)
	}
	return lines
}

// restoreCrashed acts on one record of dir (RestoreCrashedGuards). The
// record is locked (flock, not waited for) from before anything is killed
// until it is removed: a second brood command that finds it held says so
// and leaves it to the first, and one that takes it once the first let go
// finds it removed and does nothing.
func restoreCrashed(projectRoot, dir, name string) []string {
	f, err := openGuardRecord(dir, name)
	if err != nil {
		return nil
	}
	defer f.Close()
	rec, err := decodeGuardRecord(f)
	rebooted := err == nil && rec.rebooted()
	if err != nil || rec.Project != projectRoot || !rebooted && rec.Owner.alive() {
		return nil // one brood did not seal is left as it is
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return []string{fmt.Sprintf("brood: task %s's configuration guard is being put back by another brood command (it holds %s): left to it", rec.TaskID, filepath.Join(dir, name))}
	}
	if !stillNamed(f, filepath.Join(dir, name)) {
		return nil // put back and removed by the brood that held it
	}
	if rebooted {
		// No pid or start time in it names a process of this boot's
		// (review P3-3): put back, nothing killed.
		lines := restoreGuard(rec, dir)
		_ = os.Remove(filepath.Join(dir, name))
		return lines
	}
	procs := taskProcs(rec)
	if taskCgroupsLive(rec) || len(procs) > 0 {
		// Said before any signal, as a person's kill is: what stopped
		// the task is on record, not "no record says how it ended".
		_ = dispatch.Records(projectRoot).WriteKill(rec.TaskID, dispatch.Kill{TaskID: rec.TaskID, By: dispatch.KilledByBrood,
			Via: fmt.Sprintf("its parent run ended (brood pid %d died) and the next brood stopped what it still ran, to put back its configuration", rec.Owner.PID), At: time.Now().UTC()})
	}
	stopped := stopTaskCgroups(rec)
	stopped = stopTaskProcs(rec, procs) && stopped
	if !stopped || rec.Child != nil && rec.Child.alive() {
		return []string{fmt.Sprintf("brood: task %s's brood ended (pid %d) before its in-place subagent's configuration guard ran, and what the subagent started still runs (it could not be killed): nothing put back yet; stop it and run `brood tasks` again", rec.TaskID, rec.Owner.PID)}
	}
	lines := restoreGuard(rec, dir)
	_ = os.Remove(filepath.Join(dir, name))
	return lines
}

// stillNamed reports whether f is still the file at path (not removed,
// nor replaced, since it was opened).
func stillNamed(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Lstat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// maxGuardRecords bounds how many records one command looks at: a
// repository can ship any number of files there.
const maxGuardRecords = 64

// guardRecordNames lists, at most maxGuardRecords, the entries of dir (a
// real directory, not a link) named as brood names its records
// (<task id>.<pid>.json) — a name check only, nothing read.
func guardRecordNames(dir string) []string {
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	for len(out) < maxGuardRecords {
		names, err := f.Readdirnames(256)
		for _, n := range names {
			if guardRecordNamed(n) && len(out) < maxGuardRecords {
				out = append(out, n)
			}
		}
		if err != nil {
			break
		}
	}
	return out
}

// guardRecordNamed reports whether name is <task id>.<pid>.json.
func guardRecordNamed(name string) bool {
	id, rest, ok := strings.Cut(name, ".")
	pid, ok2 := strings.CutSuffix(rest, ".json")
	if !ok || !ok2 || taskdir.CheckID(id) != nil || pid == "" || len(pid) > 10 {
		return false
	}
	return strings.Trim(pid, "0123456789") == ""
}

// restoreGuard puts back what changed in each state of rec and says so.
func restoreGuard(rec *guardRecord, dir string) []string {
	var names, failed []string
	var errs []error
	aside := filepath.Join(dir, "put-aside", rec.TaskID)
	for i, sr := range rec.States {
		c, err := trust.FromRecord(sr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.PutAside(filepath.Join(aside, fmt.Sprint(i)))
		c.Widen(c.ModuleTops()) // a submodule's git directory made since
		changed, err := c.Changes()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(changed) == 0 {
			continue
		}
		f, err := c.Restore(changed)
		failed = append(failed, f...)
		if err != nil {
			errs = append(errs, err)
		}
		names = append(names, leaves(changed)...)
	}
	slices.Sort(names)
	if len(names) == 0 && len(errs) == 0 {
		return nil
	}
	line := fmt.Sprintf("brood: task %s's brood ended (pid %d) before its in-place subagent's configuration guard ran", rec.TaskID, rec.Owner.PID)
	if len(names) > 0 {
		line += "; put back now: " + strings.Join(names, ", ")
		if _, err := os.Lstat(aside); err == nil {
			line += " (what was there, a change of yours since too, is in " + aside + ")"
		}
	}
	if len(failed) > 0 || len(errs) > 0 {
		line += fmt.Sprintf("; NOT put back (check them yourself): %s %v", strings.Join(failed, ", "), errText(errors.Join(errs...)))
	}
	return []string{line}
}
