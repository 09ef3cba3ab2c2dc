package bench

import (
	"fmt"
	"io"
	"time"
)

// Issue 29's targets: brood against the floor of a whole run (a bare SDK
// parent running K bare SDK children, floorchild -parent K) measured in
// the same run, interleaved run by run.
const (
	target29CPU      = 1.15 // marginal CPU per subagent, K=16, ÷ the floor's
	target29Wall     = 1.05 // marginal wall per subagent, K=16, ÷ the floor's
	target29Root     = 2.0  // the root alone (K=0), one turn, ÷ the floor's
	target29Spawn    = 1.5  // tool_use sent → the child's first request, K=1, ÷ the floor's
	target29Records  = 5 * time.Millisecond
	target29Spawn16  = 20 * time.Millisecond
	target29PSS      = 1.5 // summed PSS, parent + 16 children, ÷ the floor's
	target29ModelRat = 1.03
)

// issueTargets writes issue 29's table: every figure, the floor's figure
// from the same run, the ratio, the target and whether this run met it.
func (rep *Report) issueTargets(w io.Writer) {
	if len(rep.FloorTiming) == 0 {
		return
	}
	fmt.Fprintln(w, "### Issue 29's table (floor: a bare anthropic-sdk-go parent running K bare SDK children, interleaved with brood run by run)")
	fmt.Fprintln(w)
	what := "brood-child"
	if rep.Child == rep.Config.Brood {
		what = "brood itself (only brood installed)"
	}
	fmt.Fprintf(w, "Children run %s.\n\n", what)
	fmt.Fprintln(w, "| figure | brood | floor | ratio | target | |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|")
	ratioRow := func(name string, got, floor time.Duration, target float64) {
		if floor <= 0 {
			fmt.Fprintf(w, "| %s | %s | – | – | ≤ %.2f× | not measured |\n", name, ms(got), target)
			return
		}
		r := ratio(got, floor)
		fmt.Fprintf(w, "| %s | %s | %s | %.2f× | ≤ %.2f× | %s |\n", name, ms(got), ms(floor), r, target, verdict(r <= target))
	}
	absRow := func(name string, got time.Duration, floor string, target time.Duration) {
		fmt.Fprintf(w, "| %s | %s | %s | | ≤ %s | %s |\n", name, ms(got), floor, ms(target), verdict(got <= target))
	}
	b16, okb := findRow(rep.Timing, targetK)
	f16, okf := findRow(rep.FloorTiming, targetK)
	if okb && okf {
		ratioRow(fmt.Sprintf("marginal CPU per subagent, K=%d", targetK), b16.MarginalCPU, f16.MarginalCPU, target29CPU)
		ratioRow(fmt.Sprintf("marginal wall per subagent, K=%d", targetK), b16.MarginalWall, f16.MarginalWall, target29Wall)
	}
	if s16, ok := findRow(rep.SelfTiming, targetK); ok && okf {
		ratioRow(fmt.Sprintf("the same with only brood installed (children re-run it): marginal CPU, K=%d", targetK), s16.MarginalCPU, f16.MarginalCPU, target29CPU)
		ratioRow(fmt.Sprintf("the same with only brood installed: marginal wall, K=%d", targetK), s16.MarginalWall, f16.MarginalWall, target29Wall)
	}
	if b0, ok := findRow(rep.Timing, 0); ok {
		f0, _ := findRow(rep.FloorTiming, 0)
		ratioRow("root alone (K=0), one turn: wall", b0.Wall, f0.Wall, target29Root)
		ratioRow("root alone (K=0), one turn: CPU", b0.CPU, f0.CPU, target29Root)
	}
	if b1, ok := findRow(rep.Timing, 1); ok {
		f1, _ := findRow(rep.FloorTiming, 1)
		ratioRow("spawn latency, K=1: tool_use sent → child's first request (the model's side)", b1.ModelSpawn, f1.ModelSpawn, target29Spawn)
		absRow("the same, brood's records: queued → first request", b1.Spawn, fmt.Sprintf("exec %s", ms(rep.Floor.ExecWall)), target29Records)
	}
	if okb {
		absRow(fmt.Sprintf("spawn latency, K=%d (median, the model's side)", targetK), b16.ModelSpawn, ms(f16.ModelSpawn), target29Spawn16)
	}
	if m16, ok := findRow(rep.Model, targetK); ok {
		fm, _ := findRow(rep.FloorModel, targetK)
		if fm.PSSKB > 0 {
			r := float64(m16.PSSKB) / float64(fm.PSSKB)
			fmt.Fprintf(w, "| peak summed PSS, parent + %d children (%s model latency) | %.1f MiB | %.1f MiB | %.2f× | ≤ %.2f× | %s |\n",
				targetK, rep.Config.ModelLatency, mib(m16.PSSKB), mib(fm.PSSKB), r, target29PSS, verdict(r <= target29PSS))
		}
		fmt.Fprintf(w, "| a child's private (anonymous) memory, median child | %.1f MiB | %.1f MiB | %.2f× | | |\n",
			mib(m16.ChildAnonKB), mib(fm.ChildAnonKB), float64(m16.ChildAnonKB)/float64(max(fm.ChildAnonKB, 1)))
		mr := ratio(m16.Wall, m16.ModelTime)
		fmt.Fprintf(w, "| total ÷ model time, %s latency, K=%d | %.3f | %.3f | | ≤ %.2f | %s |\n",
			rep.Config.ModelLatency, targetK, mr, ratio(fm.Wall, fm.ModelTime), target29ModelRat, verdict(mr <= target29ModelRat))
	}
	fmt.Fprintln(w)
	rep.initTable(w)
}

// initTable writes what package initialisers cost each binary's start.
func (rep *Report) initTable(w io.Writer) {
	f := rep.Floor
	if f.RootInit.Binary == "" {
		return
	}
	fmt.Fprintln(w, "Package initialisers (GODEBUG=inittrace=1; median of the summed clock time; heaviest packages, least of the runs):")
	fmt.Fprintln(w)
	for _, c := range []InitCost{f.RootInit, f.ChildInit} {
		fmt.Fprintf(w, "- `%s`: %s, %.1f MiB allocated;", c.Binary, ms(c.Clock), mib(c.Bytes/1024))
		for i, p := range c.Heaviest {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(w, "%s %s %s", sep, p.Package, ms(p.Clock))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}
