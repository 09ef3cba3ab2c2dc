package dispatch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/taskdir"
)

// Trust of a task's result, as a listing shows it.
const (
	TrustAccepted = "accepted" // its parent verified the result
	TrustRejected = "rejected" // its parent rejected it, or it changed since
	TrustUnjudged = "unjudged" // no verdict (an older brood, or no result)
)

// Task is everything on disk about one dispatch, as `brood tasks` shows it.
// Agent, description, depth and parent come from the parent's Owner record
// where there is one; the status from its Verdict. The child-writable
// records (Envelope, Result, Output, Log) are shown as data.
type Task struct {
	ID       string    `json:"id"`
	Dir      string    `json:"dir"`
	Agent    string    `json:"agent"`
	Status   string    `json:"status"`
	Label    string    `json:"description,omitempty"`
	Created  time.Time `json:"created"`
	Duration int64     `json:"duration_ms,omitempty"`
	Tokens   int64     `json:"tokens"`
	Depth    int       `json:"depth"`
	Parent   string    `json:"parent_task_id,omitempty"`
	// Note explains a status the records alone don't show (e.g. a child
	// whose process died without writing a result, a rejected result).
	Note string `json:"note,omitempty"`
	// Trust says whether the parent accepted the result.
	Trust string `json:"trust"`
	// Problems name records that exist but could not be read.
	Problems []string  `json:"problems,omitempty"`
	Owner    *Owner    `json:"owner,omitempty"`
	Verdict  *Verdict  `json:"verdict,omitempty"`
	Kill     *Kill     `json:"kill,omitempty"`
	Envelope *Envelope `json:"envelope,omitempty"`
	Result   *Result   `json:"result,omitempty"`
	Output   *Output   `json:"output,omitempty"`
	Log      *Log      `json:"dispatch_log,omitempty"`
	// Foreign is a task whose owner record in the project's records has no
	// valid seal (a repository shipped it): never listed as the user's,
	// never resumed.
	Foreign bool `json:"foreign,omitempty"`

	td      *taskdir.Dir
	records *taskdir.Records // where Owner and Verdict were found
	// owned and alive are what the kernel said before the records were
	// read: an owner held the task's lock; the child recorded in Log ran.
	// checked says Log's pid could be checked at all (it is numbered in
	// this reader's PID namespace).
	owned, alive, checked bool
}

// Files is the task's directory.
func (t *Task) Files() *taskdir.Dir { return t.td }

// Records is the records directory that holds the task's Owner record
// (nil when none was found).
func (t *Task) Records() *taskdir.Records { return t.records }

// LoadTask reads a task's records, wherever its directory is (top-level,
// or nested beneath the task that dispatched it: taskdir.Project.Find).
// Nothing a child can write hides a task: a corrupt envelope or result is
// named in Problems and the task still lists.
func LoadTask(projectRoot, id string) (*Task, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	td, err := taskdir.Open(projectRoot).Find(id)
	if err != nil {
		return nil, err
	}
	return LoadTaskDir(td)
}

// LoadTaskDir reads the records of the task whose directory is td.
func LoadTaskDir(td *taskdir.Dir) (*Task, error) {
	proj, id := td.Project(), td.ID()
	t := &Task{ID: id, Dir: td.Path(), td: td, Trust: TrustUnjudged}
	if !td.Exists() {
		return nil, fmt.Errorf("no task %s under %s (see `brood tasks`)", id, proj.DispatchRoot())
	}
	var env Envelope
	if err := t.read(taskdir.Envelope, &env); err == nil {
		t.Envelope = &env
	} else if errors.Is(err, fs.ErrNotExist) && t.Envelope == nil && !td.Has(taskdir.Log) {
		return nil, fmt.Errorf("no task %s under %s (see `brood tasks`)", id, proj.DispatchRoot())
	}
	var lg Log
	if t.read(taskdir.Log, &lg) == nil {
		t.Log = &lg
	}
	// Who is alive is decided before the records the living write are
	// read: a record read after a death is final. The other way round, a
	// child that wrote its result and exited between the read and the
	// check was judged gone without a result, "killed", while it had ended
	// cancelled (its parent SIGKILLed), and an owner that wrote its verdict
	// and let go meanwhile left a result "not verified".
	t.owned = LockedDir(td)
	t.lookAlive()
	var out Output
	if t.read(taskdir.Output, &out) == nil {
		t.Output = &out
		t.Duration = out.WallMS
	}
	var res Result
	resErr := t.read(taskdir.Result, &res)
	if resErr == nil {
		t.Result = &res
		t.Tokens = res.Usage.Add(res.ChildUsage).Total()
	}
	t.loadParentRecords(proj)
	t.describe()
	t.judge(resErr)
	if t.Result == nil && t.Status == StatusRunning {
		t.Tokens = t.transcriptTokens() // so far: the result adds up the rest
	}
	if len(t.Problems) > 0 {
		// Said in the listing itself: what is broken, and that the task
		// is shown from the parent's records.
		t.Note = strings.TrimPrefix(t.Note+"; ", "; ") + strings.Join(t.Problems, "; ")
	}
	return t, nil
}

// read reads one child-writable record, noting why it could not be read.
func (t *Task) read(name string, v any) error {
	err := t.td.ReadJSON(name, v)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Problems = append(t.Problems, err.Error())
	}
	return err
}

// loadParentRecords finds the Owner record and the Verdict: the project's
// records first, else the records a sandboxed parent kept in its own task
// directory: the one the task is nested in, or (a task an older brood
// made flat) the one its envelope or log names.
func (t *Task) loadParentRecords(proj taskdir.Project) {
	cands := []taskdir.Records{proj.Records()}
	if pd := t.td.Parent(); pd != nil {
		// A nested task's records are its parent's, and only those: a
		// child can make a directory beneath its own named by any other
		// task's id, which must never take on that task's records.
		cands = []taskdir.Records{pd.Owners()}
	} else {
		for _, parent := range []string{t.envParent(), t.logParent()} {
			if pd, err := proj.Task(parent); err == nil {
				cands = append(cands, pd.Owners())
			}
		}
	}
	for _, r := range cands {
		o, err := ReadOwner(r, t.ID)
		if errors.Is(err, taskdir.ErrNotYours) && t.td.Parent() == nil {
			t.Foreign = true
			t.Problems = append(t.Problems, err.Error())
		}
		if err != nil || o.TaskID != t.ID {
			continue
		}
		t.Foreign = false
		t.Owner, t.records = o, &r
		var v Verdict
		if r.ReadVerdict(t.ID, &v) == nil && v.TaskID == t.ID {
			t.Verdict = &v
		}
		break
	}
	// The root's kill record, for a nested task only where the root's
	// records place it (not a forged directory of the same id).
	var k Kill
	if (t.td.Parent() == nil || proj.Records().Recorded(t.td)) && proj.Records().ReadKill(t.ID, &k) == nil && k.TaskID == t.ID {
		t.Kill = &k
	}
}

func (t *Task) envParent() string {
	if t.Envelope != nil {
		return t.Envelope.ParentTaskID
	}
	return ""
}

func (t *Task) logParent() string {
	if t.Log != nil {
		return t.Log.ParentTaskID
	}
	return ""
}

// describe fills what the task is: from the Owner record where there is
// one (the envelope is the child's to rewrite), else from the envelope.
func (t *Task) describe() {
	if o := t.Owner; o != nil {
		t.Agent, t.Label, t.Created, t.Depth, t.Parent = o.Agent, o.Description, o.Created, o.Depth, o.ParentTaskID
	}
	if e := t.Envelope; e != nil {
		if t.Agent == "" {
			t.Agent = e.TargetAgent
		}
		if t.Owner == nil || t.Owner.Version == 0 {
			// An Owner record from before v1 kept no depth or date.
			t.Label = firstOf(t.Label, e.HandoffReason)
			t.Depth, t.Parent = e.Depth, firstOf(t.Parent, e.ParentTaskID)
			if t.Created.IsZero() {
				t.Created = e.Created
			}
		}
	}
	if t.Created.IsZero() && t.Log != nil {
		t.Created = t.Log.Queued
	}
	if t.Agent == "" && t.Log != nil {
		t.Agent = t.Log.Agent
	}
}

// lookAlive checks the child recorded in Log, where its pid is numbered in
// this reader's PID namespace: a nested task's, recorded by a parent that
// is init of a namespace of its own, is not (its pid there is another
// process's here, or none), and is taken for neither alive nor gone.
func (t *Task) lookAlive() {
	lg := t.Log
	t.checked = lg != nil && lg.PID > 0 && (lg.PIDNS == 0 || lg.PIDNS == OwnPIDNS())
	t.alive = t.checked && Alive(lg.PID, t.ID)
}

// runStart is when the current run started (zero: never).
func (t *Task) runStart() time.Time {
	if t.Log == nil {
		return time.Time{}
	}
	return t.Log.Started
}

// judge decides the status a listing shows.
func (t *Task) judge(resErr error) {
	started := t.runStart()
	killed := t.Kill != nil && !started.IsZero() && !t.Kill.At.Before(started)
	owned := t.owned
	switch {
	case owned && started.IsZero():
		t.Status, t.Note = StatusQueued, "waiting for a pool slot"
		return
	case owned && killed:
		// A person stopped it; its owner is still writing the record.
		t.Status, t.Note = StatusKilled, "stopped by the user ("+t.Kill.Via+"); its parent is recording it"
		return
	case owned:
		// Its owner still runs it, or is still verifying what the child
		// left: whatever result.json says is not final yet.
		t.Status = StatusRunning
		t.Duration = time.Since(started).Milliseconds()
		if t.checked && !t.alive {
			t.Note = "finishing"
		}
		return
	case !killed && t.alive && !started.IsZero() && (t.Result == nil || t.Output == nil || t.Output.Finished.Before(started)):
		t.Status = StatusRunning
		t.Duration = time.Since(started).Milliseconds()
		return
	}
	if v := t.Verdict; v != nil && !v.Decided.Before(started) {
		t.judgeVerdict(v)
		return
	}
	switch {
	case killed && t.Kill.By == KilledByBrood:
		t.Status, t.Note = StatusKilled, "stopped by brood: "+t.Kill.Via+"; resume it to continue"
	case killed:
		t.Status, t.Note = StatusKilled, "stopped by the user ("+t.Kill.Via+")"
	case resErr != nil && !errors.Is(resErr, fs.ErrNotExist):
		t.Status, t.Note = StatusFailed, "the child's "+resErr.Error()
	case t.Result != nil:
		t.Status = t.Result.Status
		if !ValidStatus(t.Status) {
			t.Status, t.Note = StatusFailed, fmt.Sprintf("result.json has status %q", t.Result.Status)
		} else {
			t.Note = "not verified: no verdict of its parent (recorded by an older brood, or its parent stopped first)"
		}
	case started.IsZero():
		t.Status, t.Note = StatusCancelled, "never started (the parent stopped while it was queued)"
	default:
		t.Status, t.Note = t.lost()
	}
}

// lost explains a started task with no result and no verdict.
func (t *Task) lost() (string, string) {
	switch o := t.Output; {
	case o != nil && o.Signal != "":
		return StatusKilled, "the child was killed by signal " + o.Signal + " before it wrote a result; resume it to continue"
	case o != nil:
		return StatusFailed, fmt.Sprintf("the child exited with status %d and left no result (see %s); resume it to continue", o.ExitCode, t.td.File(taskdir.Stderr))
	case t.Log != nil && t.Log.Finished.IsZero():
		return StatusKilled, "the child process is gone and no record says how it ended (its parent was killed, or could not write: a full disk?); resume it to continue"
	}
	return StatusFailed, "the child is gone and its parent could not record how it ended (a full disk?); see " + t.td.File(taskdir.Stderr)
}

// judgeVerdict applies the parent's verdict, and checks that result.json is
// still the file it judged.
func (t *Task) judgeVerdict(v *Verdict) {
	t.Status, t.Trust = v.Status, TrustAccepted
	t.Tokens = v.Usage.Total()
	if v.Status == StatusDone && v.Patch == PatchNotApplied {
		// Done on its copy, but its change is not in the tree: as
		// `brood subagent` and a plan's call say it.
		t.Status, t.Note = StatusNotApplied, "its change did not land in the tree"
	}
	if !v.Accepted {
		t.Trust = TrustRejected
		why := strings.Join(v.Reasons, "; ")
		if why == "" {
			why = v.Rejected
		}
		t.Note = "rejected by its parent: " + why
	}
	if v.Error != "" && t.Note == "" {
		t.Note = v.Error
	}
	if v.FilesChanged != nil && t.Result != nil { // the parent's walks, whatever the trust
		t.Result.FilesChanged = v.FilesChanged
	}
	if v.ResultSHA256 != "" && v.ResultSHA256 != t.ResultHash() {
		t.Trust = TrustRejected
		t.Note = strings.TrimPrefix(t.Note+"; ", "; ") + "result.json changed after its parent judged it: not the result it accepted"
	}
}

// ResultHash is the sha256 of result.json as it is now ("" if unreadable).
func (t *Task) ResultHash() string { return HashRecord(t.td, taskdir.Result) }

// HashRecord is the sha256 of a record in td ("" if unreadable).
func HashRecord(td *taskdir.Dir, name string) string {
	b, err := td.ReadFile(name, 0)
	if err != nil {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// execWindow bounds how long Alive looks again at a process that reads as
// ending: for an instant of an exec from a thread that is not its first
// (a child re-executing itself under Landlock), the kernel ends the leader
// and hands its pid to the executing thread, and no thread of the process
// reads as live; one that really ends still reads so after this.
const execWindow = 100 * time.Millisecond

// Alive reports whether pid is a live (not zombie) process running task id.
// It only informs a listing; nothing is ever signalled on its word.
func Alive(pid int, id string) bool {
	deadline := time.Now().Add(execWindow)
	for {
		alive, sure := aliveNow(pid, id)
		if alive || sure || time.Now().After(deadline) {
			return alive
		}
		time.Sleep(time.Millisecond)
	}
}

// aliveNow is one look at pid; sure is false when it reads as ending, which
// an exec in progress also does for an instant.
func aliveNow(pid int, id string) (alive, sure bool) {
	if pid <= 1 || syscall.Kill(pid, 0) != nil {
		return false, true
	}
	p, ok := ReadProc(pid)
	if ok && p.Flags&pfKthread != 0 {
		return false, true // a task's pid reused by a kernel thread
	}
	if ok && (p.State == "Z" || p.Flags&pfExiting != 0) {
		// The leader is exiting or a zombie: the process ends, or another
		// of its threads is executing a new image (the kernel ends the
		// leader first, and the new image takes its pid).
		return liveThread(pid), false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		// Gone between kill(0) and the read (reaped, or a reused pid that
		// exited): not alive. Only a machine with no /proc at all trusts
		// kill(0). Taking the error for "alive" made an exiting child look
		// running.
		_, noProc := os.Stat("/proc/self")
		return noProc != nil, true
	}
	// Empty while it exits (its memory is gone): not running any more,
	// and what it wrote before exiting is on disk. Empty too for an
	// instant of an exec (the new image's arguments not yet in place),
	// when some thread of it is not exiting.
	if len(cmdline) == 0 {
		return liveThread(pid), false
	}
	return strings.Contains(string(cmdline), id), true
}

// ListTasks reads every task of a project, newest first. A task whose
// records are corrupt is listed with its problems, never left out; one not
// made by the user's brood is (ListTasksSealed says how many).
func ListTasks(projectRoot string) ([]*Task, error) {
	out, _, err := ListTasksSealed(projectRoot)
	return out, err
}

// ListTasksSealed is ListTasks and the number of top-level tasks left out
// because their owner record has no seal of this user's (a repository
// shipped it, another user made it, or a brood from before records were
// sealed): a listing says so rather than hide them silently.
func ListTasksSealed(projectRoot string) ([]*Task, int, error) {
	dirs, err := taskdir.Open(projectRoot).Tasks()
	if err != nil {
		return nil, 0, err
	}
	var all []*Task
	foreign := map[string]bool{}
	for _, td := range dirs {
		t, err := LoadTaskDir(td)
		if err != nil {
			continue // an empty directory: no task was ever recorded there
		}
		if t.Foreign {
			foreign[t.ID] = true
		}
		all = append(all, t)
	}
	// A task not made by the user's brood is left out, and so is every
	// task nested beneath one (its records are that task's).
	var out []*Task
	for _, t := range all {
		top := t.td
		for p := top.Parent(); p != nil; p = p.Parent() {
			top = p
		}
		if !foreign[top.ID()] {
			out = append(out, t)
		}
	}
	return out, len(foreign), nil
}

// Usage of a task, or zero.
func (t *Task) Usage() model.Usage {
	if t.Verdict != nil && !t.Verdict.Decided.Before(t.runStart()) {
		return t.Verdict.Usage
	}
	if t.Result == nil {
		return model.Usage{}
	}
	return t.Result.Usage.Add(t.Result.ChildUsage)
}

// Finder finds a dispatcher's tasks by id: the project's (In nil: the
// root, which reads every task directory), or, for a dispatcher that runs
// in a sandboxed child, its own children's, nested in its task directory
// In (the only task directories its rules name).
type Finder struct {
	ProjectRoot string
	In          *taskdir.Dir
}

// Load reads task id's records (LoadTask, or LoadTaskDir of In's child;
// a child an older brood made flat in .brood/dispatch is looked for there
// too, which only a child its sandbox does not hide that from reads).
func (f Finder) Load(id string) (*Task, error) {
	if f.In == nil {
		return LoadTask(f.ProjectRoot, id)
	}
	td, err := f.In.Child(id)
	if err != nil {
		return nil, err
	}
	if flat, err := taskdir.Open(f.ProjectRoot).Task(id); err == nil && !td.Exists() && flat.Exists() {
		td = flat
	}
	return LoadTaskDir(td)
}
