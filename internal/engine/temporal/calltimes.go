package temporal

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/spawntrace"
	"github.com/broodhq/brood/internal/taskdir"
)

// CallTimes is a worker's breakdown of its calls, stage by stage, from
// monotonic marks in the activity (and, when the dispatcher traces its
// spawns, BROOD_SPAWNTRACE, the child's own stages): a benchmark's, never
// the run's. Its methods are safe for concurrent use; a nil *CallTimes
// keeps nothing.
type CallTimes struct {
	mu    sync.Mutex
	order []string
	d     map[string][]time.Duration
}

// Add records one call's time in stage.
func (t *CallTimes) Add(stage string, d time.Duration) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.d == nil {
		t.d = map[string][]time.Duration{}
	}
	if _, ok := t.d[stage]; !ok {
		t.order = append(t.order, stage)
	}
	t.d[stage] = append(t.d[stage], d)
}

// String is each stage's median and p90 (and how many calls had it), in
// the order the stages were first seen.
func (t *CallTimes) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var sb strings.Builder
	for _, s := range t.order {
		ds := slices.Clone(t.d[s])
		slices.Sort(ds)
		med, p90 := ds[len(ds)/2], ds[min(len(ds)-1, len(ds)*9/10)]
		fmt.Fprintf(&sb, "\n    %-28s %7.1f ms (p90 %7.1f) n=%d", s, ms(med), ms(p90), len(ds))
	}
	return sb.String()
}

// Take is String, and forgets what it said (the next run's breakdown
// starts empty).
func (t *CallTimes) Take() string {
	if t == nil {
		return ""
	}
	s := t.String()
	t.mu.Lock()
	t.order, t.d = nil, nil
	t.mu.Unlock()
	return s
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// lap is one call's clock: each mark records the time since the previous
// one under its stage. A nil *lap marks nothing.
type lap struct {
	t    *CallTimes
	last time.Time
}

func (t *CallTimes) start() *lap {
	if t == nil {
		return nil
	}
	return &lap{t: t, last: time.Now()}
}

// begin starts an activity's laps (nil, and a done that does nothing, when
// t is nil): the wait since sched (the server's clock) is recorded, and
// done, deferred by the handler so it runs last, records what the
// deferred clean-ups took (the copy removed) and the whole handler, to set
// against the worker's activity task from its poll to its response.
func (t *CallTimes) begin(sched time.Time) (lp *lap, done func()) {
	lp = t.start()
	if lp == nil {
		return nil, func() {}
	}
	if !sched.IsZero() {
		t.Add("queued (server clock)", lp.last.Sub(sched))
	}
	begun := lp.last
	return lp, func() { lp.mark("after the result: clean-ups"); t.Add("handler: total", time.Since(begun)) }
}

func (l *lap) mark(stage string) {
	if l == nil {
		return
	}
	now := time.Now()
	l.t.Add(stage, now.Sub(l.last))
	l.last = now
}

// timed runs f and records its time in stage.
func (t *CallTimes) timed(stage string, f func()) {
	if t == nil {
		f()
		return
	}
	at := time.Now()
	f()
	t.Add(stage, time.Since(at))
}

// spawnStages adds a traced spawn's stages (the dispatcher's and the
// child's marks in the task's directory) as "child: <stage>".
func (t *CallTimes) spawnStages(root, id string) {
	if t == nil || id == "" {
		return
	}
	td, err := taskdir.Open(root).Task(id)
	if err != nil {
		return
	}
	parent, err := spawntrace.Read(td.File(spawntrace.ParentFile))
	if err != nil {
		return
	}
	child, _ := spawntrace.Read(td.File(spawntrace.ChildFile))
	for _, s := range spawntrace.Stages(parent, child, 0, 0) {
		t.Add("child: "+s.Name, time.Duration(s.Dur))
	}
}

// AddSpawns adds the traced spawns of every task under root (a local
// engine's project: the same stages, to compare a worker's with).
func (t *CallTimes) AddSpawns(root string) {
	if t == nil {
		return
	}
	ids, err := taskdir.Open(root).TaskIDs()
	if err != nil {
		return
	}
	for _, id := range ids {
		t.spawnStages(root, id)
	}
}
