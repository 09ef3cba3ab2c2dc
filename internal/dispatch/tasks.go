package dispatch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/broodhq/brood/internal/model"
)

// Task is everything on disk about one dispatch, as `brood tasks` shows it.
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
	// whose process died without writing a result).
	Note     string    `json:"note,omitempty"`
	Envelope *Envelope `json:"envelope,omitempty"`
	Result   *Result   `json:"result,omitempty"`
	Output   *Output   `json:"output,omitempty"`
	Log      *Log      `json:"dispatch_log,omitempty"`
}

// LoadTask reads a task's records. A task with an envelope but no result is
// running if its process is alive, and killed (lost) otherwise: the records
// on disk are the truth, whoever died.
func LoadTask(projectRoot, id string) (*Task, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	dir := Dir(projectRoot, id)
	t := &Task{ID: id, Dir: dir}
	var env Envelope
	if err := ReadJSON(filepath.Join(dir, EnvelopeFile), &env); err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("no task %s under %s (see `brood tasks`)", id, Root(projectRoot))
		}
		return nil, err
	}
	t.Envelope = &env
	t.Agent, t.Label, t.Created, t.Depth, t.Parent = env.TargetAgent, env.HandoffReason, env.Created, env.Depth, env.ParentTaskID
	var lg Log
	if ReadJSON(filepath.Join(dir, LogFile), &lg) == nil {
		t.Log = &lg
	}
	var out Output
	if ReadJSON(filepath.Join(dir, OutputFile), &out) == nil {
		t.Output = &out
		t.Duration = out.WallMS
	}
	var res Result
	if ReadJSON(filepath.Join(dir, ResultFile), &res) == nil {
		t.Result = &res
		t.Status = res.Status
		u := res.Usage.Add(res.ChildUsage)
		t.Tokens = u.Total()
	}
	owned := TaskLocked(dir)
	if owned && t.Log != nil && !t.Log.Started.IsZero() {
		// Its owner still runs it, or is still verifying what the child
		// left: whatever result.json says is not final yet.
		t.Status = StatusRunning
		t.Duration = time.Since(t.Log.Started).Milliseconds()
		if t.Log.PID > 0 && !Alive(t.Log.PID, id) {
			t.Note = "finishing"
		}
		return t, nil
	}
	if t.Log != nil && t.Log.PID > 0 && !t.Log.Started.IsZero() && Alive(t.Log.PID, id) && (t.Result == nil || t.Output == nil || t.Output.Finished.Before(t.Log.Started)) {
		// Running now (possibly a resume of a finished task).
		t.Status = StatusRunning
		t.Duration = time.Since(t.Log.Started).Milliseconds()
		return t, nil
	}
	if t.Result == nil {
		switch {
		case owned && (t.Log == nil || t.Log.Started.IsZero()):
			t.Status = StatusQueued
			t.Note = "waiting for a pool slot"
		case owned:
			t.Status = StatusRunning
			t.Note = "finishing"
		case t.Log == nil || t.Log.Started.IsZero():
			t.Status = StatusCancelled
			t.Note = "never started (the parent stopped while it was queued)"
		default:
			t.Status = StatusKilled
			t.Note = "the child process is gone and left no result (its parent was killed); resume it to continue"
		}
	}
	return t, nil
}

// Alive reports whether pid is a live (not zombie) process running task id.
func Alive(pid int, id string) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	if p, ok := ReadProc(pid); ok && p.State == "Z" {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return true // no /proc: trust kill(0)
	}
	return strings.Contains(string(cmdline), id)
}

// ListTasks reads every task of a project, newest first.
func ListTasks(projectRoot string) ([]*Task, error) {
	ents, err := os.ReadDir(Root(projectRoot))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Task
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		t, err := LoadTask(projectRoot, e.Name())
		if err != nil {
			continue
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *Task) int { return strings.Compare(b.ID, a.ID) })
	return out, nil
}

// Usage of a task, or zero.
func (t *Task) Usage() model.Usage {
	if t.Result == nil {
		return model.Usage{}
	}
	return t.Result.Usage.Add(t.Result.ChildUsage)
}
