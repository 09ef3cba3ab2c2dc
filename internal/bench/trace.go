package bench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/broodhq/brood/internal/spawntrace"
)

// stageOwners names every stage of a traced spawn, in the order they
// happen, with who owns it and what it does (--trace).
func stageOwners() [][2]string {
	return [][2]string{
		{"dispatch", "parent: the tool_use parsed, the Task tool called"},
		{"records", "parent: envelope, owner record, task lock"},
		{"setup", "parent: stderr/tmp reset, child command, warm claim"},
		{"acquire", "parent: a pool slot"},
		{"isolate", "parent: isolation copy, namespaces, sandbox check (beside the snapshot's walk)"},
		{"snapshot", "parent: what is left of the tree's snapshot before a child the kernel cannot hold"},
		{"cgroup", "parent: containment (cgroup, limits)"},
		{"pipes", "parent: the child's stdin, stdout and stderr pipes"},
		{"thread", "parent: a locked OS thread of its own to start the child from"},
		{"cgroup enter", "parent: the starting thread joins the child's v1 cgroups"},
		{"landlock", "parent: the child's Landlock domain on the starting thread"},
		{"exec", "parent: fork+exec"},
		{"init", "child: runtime and package init to main (an isolated child's mount)"},
		{"envelope", "child: directories, envelope read"},
		{"sandbox", "child: its sandbox (a Landlock re-exec when the parent did not)"},
		{"configured", "child: its configuration, past the sandbox (brood's: a Factory, telemetry)"},
		{"model", "child: model resolved (SDK client)"},
		{"child snapshot", "child: a writer's own tree snapshot (read from its parent's)"},
		{"ready", "child: tools, transcript, agent loop"},
		{"first request", "child: request built, connection, sent, as the model saw it"},
	}
}

// StageRow is one stage over every traced child of every run of one K.
type StageRow struct {
	Name         string
	Mean, Median time.Duration
	N            int
}

// traceStages reads a child's spawn trace from its task directory: the
// stages from the parent's tool_use sent (sent) to the child's first
// request (first), both CLOCK_MONOTONIC from the fake. ok is false when
// the spawn was not traced (no parent record).
func traceStages(dir string, sent, first int64) ([]spawntrace.Stage, bool) {
	p, err := spawntrace.Read(filepath.Join(dir, spawntrace.ParentFile))
	if err != nil {
		return nil, false
	}
	c, err := spawntrace.Read(filepath.Join(dir, spawntrace.ChildFile))
	if err != nil && !os.IsNotExist(err) {
		return nil, false
	}
	return spawntrace.Stages(p, c, sent, first), true
}

// stageRows summarises every traced child's stages, in stageOwners' order
// (a stage no one named comes last), with a row "total" last.
func stageRows(ss []*Sample) []StageRow {
	var traces [][]spawntrace.Stage
	for _, s := range ss {
		traces = append(traces, s.Trace...)
	}
	return summarizeStages(traces, stageOwners())
}

// summarizeStages is stageRows over any traces, in order's order.
func summarizeStages(traces [][]spawntrace.Stage, order [][2]string) []StageRow {
	by := map[string][]time.Duration{}
	var totals []time.Duration
	for _, st := range traces {
		var tot time.Duration
		for _, x := range st {
			by[x.Name] = append(by[x.Name], time.Duration(x.Dur))
			tot += time.Duration(x.Dur)
		}
		totals = append(totals, tot)
	}
	if len(totals) == 0 {
		return nil
	}
	names := make([]string, 0, len(by))
	for _, o := range order {
		if _, ok := by[o[0]]; ok {
			names = append(names, o[0])
		}
	}
	for n := range by {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	var rows []StageRow
	n := len(totals)
	for _, name := range names {
		ds := by[name]
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		// The mean over every child (a stage a child lacked counts 0), so
		// the means add up to the mean total.
		rows = append(rows, StageRow{Name: name, Mean: sum / time.Duration(n), Median: median(ds), N: len(ds)})
	}
	var sum time.Duration
	for _, d := range totals {
		sum += d
	}
	return append(rows, StageRow{Name: "total", Mean: sum / time.Duration(n), Median: median(totals), N: n})
}

func ownerOf(stage string) string {
	for _, o := range stageOwners() {
		if o[0] == stage {
			return o[1]
		}
	}
	return ""
}

// traceTable writes the spawn trace: per K, each stage's mean over every
// traced child (the means add up to the mean total) and its median.
func (rep *Report) traceTable(w io.Writer) {
	var rows []Row
	for _, r := range rep.Timing {
		if len(r.Stages) > 0 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "### Spawn trace: tool_use sent → the child's first request, stage by stage")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Each stage ends at its mark (CLOCK_MONOTONIC, parent and child); mean over every child of every run (the means add up to the total), median in brackets.")
	fmt.Fprintln(w)
	head, sep := "| stage | owner: what |", "|---|---|"
	for _, r := range rows {
		head += fmt.Sprintf(" K=%d |", r.K)
		sep += "---:|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, sep)
	var names []string
	for _, r := range rows {
		for _, s := range r.Stages {
			if !slices.Contains(names, s.Name) {
				names = append(names, s.Name)
			}
		}
	}
	// "total" last, whatever order the Ks brought the names in.
	names = append(slices.DeleteFunc(names, func(n string) bool { return n == "total" }), "total")
	for _, name := range names {
		line := fmt.Sprintf("| %s | %s |", name, ownerOf(name))
		if name == "total" {
			line = "| **total** | |"
		}
		for _, r := range rows {
			cell := "–"
			for _, s := range r.Stages {
				if s.Name == name {
					cell = fmt.Sprintf("%s (%s)", ms(s.Mean), ms(s.Median))
				}
			}
			line += " " + cell + " |"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
}
