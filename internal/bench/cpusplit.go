package bench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/taskdir"
)

// CPUSplit is one run's CPU split between its parent side and its
// children: each child's own user+sys (its wait4 rusage, which includes
// whatever it started and reaped) and the rest of the tree (the root
// process itself and any other program it ran, git for instance).
type CPUSplit struct {
	// Children is each child's CPU, in no particular order; for brood,
	// its task's output.json cpu_ms (whole milliseconds, truncated: a
	// child's figure reads 0.5 ms low on average), for the floor the
	// floor parent's record of its children (nanoseconds).
	Children []time.Duration
}

// Sum is the children's CPU together.
func (c CPUSplit) Sum() time.Duration {
	var t time.Duration
	for _, d := range c.Children {
		t += d
	}
	return t
}

// SplitRow is the CPU split of every run of one K.
type SplitRow struct {
	// Parent is the median over runs of the tree's CPU less its
	// children's; Children the median over runs of the children's sum;
	// Child the median child over every run.
	Parent, Children, Child time.Duration
	N                       int // children with a figure, fewest of a run
	// MarginalParent is (Parent(K) − Parent(0)) / K: the parent side's
	// CPU per subagent; ChildrenPerK is Children / K.
	MarginalParent, ChildrenPerK time.Duration
}

func splitRow(ss []*Sample) SplitRow {
	var r SplitRow
	var parent, children, each []time.Duration
	for i, s := range ss {
		sum := s.Split.Sum()
		parent, children = append(parent, s.CPU-sum), append(children, sum)
		each = append(each, s.Split.Children...)
		if i == 0 || len(s.Split.Children) < r.N {
			r.N = len(s.Split.Children)
		}
	}
	r.Parent, r.Children, r.Child = median(parent), median(children), median(each)
	return r
}

func (r *SplitRow) marginal(k int, base SplitRow) {
	if k == 0 {
		return
	}
	r.MarginalParent = (r.Parent - base.Parent) / time.Duration(k)
	r.ChildrenPerK = r.Children / time.Duration(k)
}

// childCPU reads the CPU the pool recorded for a task's child
// (output.json, written once the child was reaped); ok is false without
// one.
func childCPU(dir string) (time.Duration, bool) {
	var o struct {
		CPUMS *int64 `json:"cpu_ms"`
	}
	if readJSON(filepath.Join(dir, taskdir.Output), &o) != nil || o.CPUMS == nil {
		return 0, false
	}
	return time.Duration(*o.CPUMS) * time.Millisecond, true
}

// floorCPUPrefix names the files the floor parent writes, one per child:
// its user+sys in nanoseconds.
const floorCPUPrefix = "floor-cpu-"

// readFloorCPU collects and removes the floor parent's records of its
// children's CPU in dir.
func readFloorCPU(dir string) (CPUSplit, error) {
	var c CPUSplit
	ents, err := os.ReadDir(dir)
	if err != nil {
		return c, err
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), floorCPUPrefix) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			return c, err
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return c, fmt.Errorf("%s: %v", p, err)
		}
		c.Children = append(c.Children, time.Duration(ns))
		if err := os.Remove(p); err != nil {
			return c, err
		}
	}
	return c, nil
}

// cpuSplit writes the CPU split of the zero-latency runs: the parent
// side and the children, for brood and for the floor of a whole run.
func (rep *Report) cpuSplit(w io.Writer) {
	measured := false
	for _, r := range append(append([]Row(nil), rep.Timing...), rep.Model...) {
		measured = measured || r.Split.N > 0
	}
	if !measured {
		return
	}
	fmt.Fprintln(w, "### Where the CPU goes: parent side and children (medians)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Parent side = the whole tree's user+sys less its children's own (the root process and what else it ran); a child's = its wait4 rusage (brood: output.json cpu_ms, whole ms).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| K | model latency | who | tree CPU | parent side | parent side per subagent (marginal) | children | children per subagent | median child | children measured |")
	fmt.Fprintln(w, "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, set := range []struct {
		who  string
		rows []Row
	}{{"brood", rep.Timing}, {"compared command", rep.CompareTiming}, {"floor", rep.FloorTiming}, {"brood (children run brood)", rep.SelfTiming},
		{"brood", rep.Model}, {"compared command", rep.CompareModel}, {"floor", rep.FloorModel}} {
		for _, r := range set.rows {
			if r.K == 0 {
				fmt.Fprintf(w, "| 0 | %s | %s | %s | %s | – | – | – | – | – |\n", r.Latency, set.who, ms(r.CPU), ms(r.Split.Parent))
				continue
			}
			s := r.Split
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", r.K, r.Latency, set.who, ms(r.CPU), ms(s.Parent),
				ms(s.MarginalParent), ms(s.Children), ms(s.ChildrenPerK), ms(s.Child), s.N)
		}
	}
	fmt.Fprintln(w)
}
