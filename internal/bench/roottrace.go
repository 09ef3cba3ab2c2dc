package bench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/broodhq/brood/internal/spawntrace"
	"github.com/broodhq/brood/internal/taskdir"
)

// rootStageOwners names every stage of a root's own run (K=0, --trace),
// in the order they happen: from the bench's instant before the exec to
// the root's reaping.
func rootStageOwners() [][2]string {
	return [][2]string{
		{"main", "root: exec, the Go runtime and every package initialiser (their share: GODEBUG=inittrace, below the table)"},
		{"settings", "root: the command tree, flags, settings files, project trust"},
		{"prepared", "root: model resolved, prompt, session named (.brood/ proven writable), system prompt, output, prices"},
		{"assembled", "root: hooks, telemetry, dispatcher (agent registry, depth), tools, transcript opened"},
		{"first request", "root: prompt hooks, init line, agent loop, request built, connection, sent (as the model saw it)"},
		{"model", "the fake model: the answer streamed (the floor's is the same)"},
		{"done", "root: the answer decoded, transcript and output written, closers"},
		{"exit", "root: process exit, reaped by the bench"},
	}
}

// floorTraceFile is where the floor parent (floorchild -parent 0) writes
// its own run's marks, in the bench's directory.
const floorTraceFile = "floor" + spawntrace.RootFileSuffix

// rootStages reads a root's trace of its own run, brood's from beside its
// transcript (one session per run: the bench moves the last run's
// aside) or the floor's from the bench's directory (removed once read),
// with its first request's arrival and answer from the fake's log and
// exited, the instant the bench reaped it. nil when the run left no
// record (a command that does not trace itself).
func (h *Harness) rootStages(log []Request, exited int64) []spawntrace.Stage {
	files, _ := filepath.Glob(filepath.Join(taskdir.Open(h.proj.root).SessionsDir(), "*"+spawntrace.RootFileSuffix))
	floor := filepath.Join(h.dir, floorTraceFile)
	if _, err := os.Stat(floor); err == nil {
		files = append(files, floor)
		defer os.Remove(floor)
	}
	if len(files) != 1 {
		return nil
	}
	rec, err := spawntrace.Read(files[0])
	if err != nil {
		return nil
	}
	i := slices.IndexFunc(log, func(r Request) bool { return r.Role == RoleParent && r.Turn == 1 })
	if i < 0 {
		return nil
	}
	return spawntrace.RootStages(rec, log[i].ArrivedMono, log[i].SentMono, exited)
}

func rootOwnerOf(stage string) string {
	for _, o := range rootStageOwners() {
		if o[0] == stage {
			return o[1]
		}
	}
	return ""
}

// rootTraceTable writes the root's own run (K=0) stage by stage, beside
// the compared command's when it is a traced brood too.
func (rep *Report) rootTraceTable(w io.Writer) {
	b, ok := findRow(rep.Timing, 0)
	if !ok || len(b.RootStages) == 0 {
		return
	}
	c, _ := findRow(rep.CompareTiming, 0)
	cmp := len(c.RootStages) > 0
	fl, _ := findRow(rep.FloorTiming, 0)
	floor := len(fl.RootStages) > 0
	fmt.Fprintln(w, "### The root alone (K=0), stage by stage")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "From the bench's instant before the exec to the root's reaping; each stage ends at its mark (CLOCK_MONOTONIC: the root's, the fake's for the model); mean over the runs (the means add up to the total), median in brackets. The floor marks its main and its end alone: its \"done\" holds all it does between its request's answer and its end, its \"first request\" all from its main to its request.")
	fmt.Fprintln(w)
	head, sep := "| stage | owner: what | brood |", "|---|---|---:|"
	if cmp {
		head += " compared |"
		sep += "---:|"
	}
	if floor {
		head += " floor (bare SDK program) |"
		sep += "---:|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, sep)
	cell := func(rows []StageRow, name string) string {
		for _, s := range rows {
			if s.Name == name {
				return fmt.Sprintf("%s (%s)", ms(s.Mean), ms(s.Median))
			}
		}
		return "–"
	}
	var names []string
	for _, rows := range [][]StageRow{b.RootStages, c.RootStages, fl.RootStages} {
		for _, s := range rows {
			if !slices.Contains(names, s.Name) && s.Name != "total" {
				names = append(names, s.Name)
			}
		}
	}
	for _, name := range append(names, "total") {
		line := fmt.Sprintf("| %s | %s | %s |", name, rootOwnerOf(name), cell(b.RootStages, name))
		if name == "total" {
			line = fmt.Sprintf("| **total** | | %s |", cell(b.RootStages, name))
		}
		if cmp {
			line += " " + cell(c.RootStages, name) + " |"
		}
		if floor {
			line += " " + cell(fl.RootStages, name) + " |"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
}
