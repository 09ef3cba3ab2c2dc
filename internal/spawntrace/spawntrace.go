// Package spawntrace gives every millisecond of a subagent's spawn an
// owner: the parent marks the end of each stage of its spawn path
// (records, setup, acquire, snapshot, isolate, cgroup, exec) on a trace
// carried by the dispatch's context, passes its start instant to the child
// in the child's environment, and the child marks its own stages (init,
// envelope, sandbox, ready) on a trace of its own. Both write their marks
// into the task directory once the child has ended, off the spawn path;
// `brood bench --trace` reads them beside the fake model's arrival times.
//
// Every instant is CLOCK_MONOTONIC in nanoseconds: one clock for every
// process of the machine, so a parent's mark and a child's compare. It is
// off unless the root runs with BROOD_SPAWNTRACE set; then a Mark costs a
// clock read and an append, and an untraced context costs a context lookup.
package spawntrace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// EnvVar turns tracing on in the root (any value) and carries the parent's
// start instant to a child (its value there).
const EnvVar = "BROOD_SPAWNTRACE"

// Files a task directory holds when its spawn was traced.
const (
	ParentFile = "spawntrace-parent.json"
	ChildFile  = "spawntrace-child.json"
)

// Point is the end of one named stage.
type Point struct {
	Stage string `json:"stage"`
	At    int64  `json:"at"` // CLOCK_MONOTONIC, ns
}

// Record is what one side wrote: the start instant (the parent's, in
// both) and its marks in order.
type Record struct {
	Start int64   `json:"start"`
	Marks []Point `json:"marks"`
}

// Trace is one side's marks. Its methods are safe for concurrent use.
type Trace struct {
	mu  sync.Mutex
	rec Record
}

type key struct{}

// Now is CLOCK_MONOTONIC in nanoseconds.
func Now() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0
	}
	return ts.Nano()
}

// Start begins a parent's trace of one dispatch when getenv(EnvVar) is set
// (ctx unchanged otherwise).
func Start(ctx context.Context, getenv func(string) string) context.Context {
	if getenv(EnvVar) == "" {
		return ctx
	}
	return context.WithValue(ctx, key{}, &Trace{rec: Record{Start: Now()}})
}

// Child begins a child's trace when its parent passed a start instant in
// EnvVar (ctx unchanged otherwise), and marks "init": the process is in
// its main, runtime and package initialisers done.
func Child(ctx context.Context, getenv func(string) string) context.Context {
	if t := started(getenv(EnvVar), "init"); t != nil {
		return context.WithValue(ctx, key{}, t)
	}
	return ctx
}

// started is a trace from the starter's instant in env (nil when it holds
// none), its first stage ended now by mark.
func started(env, mark string) *Trace {
	start, err := strconv.ParseInt(env, 10, 64)
	if err != nil || start <= 0 {
		return nil
	}
	t := &Trace{rec: Record{Start: start}}
	t.mark(mark)
	return t
}

func from(ctx context.Context) *Trace {
	t, _ := ctx.Value(key{}).(*Trace)
	return t
}

// On reports whether ctx carries a trace.
func On(ctx context.Context) bool { return from(ctx) != nil }

// Mark records the end of stage now, if ctx is traced.
func Mark(ctx context.Context, stage string) {
	if t := from(ctx); t != nil {
		t.mark(stage)
	}
}

func (t *Trace) mark(stage string) {
	at := Now()
	t.mu.Lock()
	t.rec.Marks = append(t.rec.Marks, Point{Stage: stage, At: at})
	t.mu.Unlock()
}

// Env returns env with EnvVar set to ctx's start instant, for the child's
// command; env unchanged if ctx is not traced.
func Env(ctx context.Context, env []string) []string {
	t := from(ctx)
	if t == nil {
		return env
	}
	if env == nil {
		env = os.Environ() // what exec would have given it
	}
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if len(e) < len(EnvVar)+1 || e[:len(EnvVar)+1] != EnvVar+"=" {
			out = append(out, e)
		}
	}
	return append(out, EnvVar+"="+strconv.FormatInt(t.rec.Start, 10))
}

func (t *Trace) encode() ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return json.Marshal(t.rec)
}

// WriteWith writes ctx's trace as name through write, if ctx is traced:
// the parent passes its task directory's writer (taskdir.Dir.WriteFile,
// tmp+rename beneath the project, a link replaced, never followed), since
// the child can write in that directory.
func WriteWith(ctx context.Context, name string, write func(name string, data []byte, sync bool) error) error {
	t := from(ctx)
	if t == nil {
		return nil
	}
	b, err := t.encode()
	if err != nil {
		return err
	}
	return write(name, b, false)
}

// Write writes ctx's trace into dir as name (tmp+rename; a new temporary
// file, never one already there), if ctx is traced: the child's, into its
// own task directory.
func Write(ctx context.Context, dir, name string) error {
	t := from(ctx)
	if t == nil {
		return nil
	}
	return t.write(dir, name)
}

func (t *Trace) write(dir, name string) error {
	b, err := t.encode()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("spawn trace: %w", err)
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), filepath.Join(dir, name))
	}
	if werr != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("spawn trace: %w", werr)
	}
	return nil
}

// Read reads a record Write wrote.
func Read(path string) (Record, error) {
	var r Record
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Stage is one interval of a spawn: from the previous mark to the end of
// this one.
type Stage struct {
	Name string
	Dur  int64 // ns
}

// Stages merges a spawn's instants into consecutive stages, each owned by
// the mark that ends it: "dispatch" from sent (the model's tool_use fully
// sent; 0 if unknown) to the parent's start, the parent's and the child's
// marks in time order, and "first request" to first (the child's first
// model request as the model saw it; 0 if unknown). The stages sum to
// first − sent, so every nanosecond between has an owner. A mark before
// sent (a warm child's start, made ahead of its task) is not part of the
// spawn and is left out.
func Stages(parent, child Record, sent, first int64) []Stage {
	marks := slices.DeleteFunc(append(append([]Point(nil), parent.Marks...), child.Marks...),
		func(p Point) bool { return sent > 0 && p.At < sent })
	if parent.Start > 0 {
		marks = append(marks, Point{Stage: "dispatch", At: parent.Start})
	}
	if first > 0 {
		marks = append(marks, Point{Stage: "first request", At: first})
	}
	// Insertion sort, stable: a handful of marks.
	for i := 1; i < len(marks); i++ {
		for j := i; j > 0 && marks[j].At < marks[j-1].At; j-- {
			marks[j], marks[j-1] = marks[j-1], marks[j]
		}
	}
	prev := sent
	var out []Stage
	for _, m := range marks {
		if prev == 0 {
			prev = m.At
			if m.Stage != "dispatch" {
				out = append(out, Stage{Name: m.Stage})
			}
			continue
		}
		out = append(out, Stage{Name: m.Stage, Dur: m.At - prev})
		prev = m.At
	}
	return out
}
