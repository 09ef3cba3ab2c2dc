package bench

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
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
	target29Compare  = 0.10 // marginal wall per subagent, K=16, ÷ the compared agent's (Claude Code in the issue)
	// target29Self: with only brood installed (children re-run it), "as
	// with brood-child": marginal CPU and wall ÷ brood-child's in the same
	// run, within 5 %.
	target29Self = 1.05
)

// issueTargets writes issue 29's table: every figure, the floor's figure
// from the same run, the ratio, the target and whether this run met it;
// with --compare, the marginal wall against the compared command's.
func (rep *Report) issueTargets(w io.Writer) {
	floor, cmp := len(rep.FloorTiming) > 0, rep.comparedAgent()
	if !floor && !cmp {
		return
	}
	fmt.Fprintln(w, "### Issue 29's table (floor: a bare anthropic-sdk-go parent running K bare SDK children, interleaved with brood run by run)")
	fmt.Fprintln(w)
	what := "brood-child"
	if rep.Child == rep.Config.Brood {
		what = "brood itself (only brood installed)"
	}
	if rep.Config.Warm > 0 {
		what += fmt.Sprintf(", started ahead of their tasks (BROOD_WARM=%d: these are the warm runs; the cold ones are the compared command's)", rep.Config.Warm)
	}
	memFrom := "memory of the sampled runs"
	if rep.Config.Sample < 0 {
		memFrom = "no memory sampled (--sample off)"
	}
	fmt.Fprintf(w, "Children run %s. Walls, CPU and latencies are of the runs nothing sampled; %s.", what, memFrom)
	if !floor {
		fmt.Fprint(w, " No floor in this run (it is built from brood's source tree: --src DIR): only the compared command's row.")
	}
	fmt.Fprint(w, "\n\n")
	fmt.Fprintln(w, "| figure | brood | floor | ratio | target | |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|")
	if floor {
		rep.issueFloorRows(w)
		rep.issueMemoryRows(w)
	}
	if cmp {
		rep.issueCompareRow(w)
	} else {
		unmeasured(w, fmt.Sprintf("marginal wall per subagent, K=%d, against another agent's (Claude Code in the issue)", targetK),
			fmt.Sprintf("≤ %.2f×", target29Compare), "no --compare")
	}
	fmt.Fprintln(w)
	rep.initTable(w)
}

// ratioRow writes a figure of issue 29's table against another's, with its
// target: a marginal figure at or below zero is noise, not a ratio.
func ratioRow(w io.Writer, name string, got, floor time.Duration, floorText string, target float64) {
	if floorText == "" {
		floorText = ms(floor)
	}
	switch {
	case floor == 0:
		fmt.Fprintf(w, "| %s | %s | – | – | ≤ %.2f× | not measured |\n", name, ms(got), target)
	case got <= 0 || floor < 0:
		fmt.Fprintf(w, "| %s | %s | %s | – | ≤ %.2f× | %s: not measured |\n", name, ms(got), floorText, target, belowNoise)
	default:
		r := ratio(got, floor)
		fmt.Fprintf(w, "| %s | %s | %s | %.2f× | ≤ %.2f× | %s |\n", name, ms(got), floorText, r, target, verdict(r <= target))
	}
}

// unmeasured writes a row of issue 29's table this run did not measure,
// with its target and the flag that would: every row of the issue's table
// is in the report, measured or not.
func unmeasured(w io.Writer, name, target, why string) {
	fmt.Fprintf(w, "| %s | – | – | – | %s | not measured (%s) |\n", name, target, why)
}

// noK says which K the run lacks for a figure.
func noK(k int) string { return fmt.Sprintf("--ks has no %d", k) }

// issueFloorRows are the table's wall, CPU and latency rows.
func (rep *Report) issueFloorRows(w io.Writer) {
	absRow := func(name string, got time.Duration, floor string, target time.Duration) {
		fmt.Fprintf(w, "| %s | %s | %s | | ≤ %s | %s |\n", name, ms(got), floor, ms(target), verdict(got <= target))
	}
	b16, okb := findRow(rep.Timing, targetK)
	f16, okf := findRow(rep.FloorTiming, targetK)
	cpu16, wall16 := fmt.Sprintf("marginal CPU per subagent, K=%d", targetK), fmt.Sprintf("marginal wall per subagent, K=%d", targetK)
	if okb && okf {
		ratioRow(w, cpu16, b16.MarginalCPU, f16.MarginalCPU, "", target29CPU)
		ratioRow(w, wall16, b16.MarginalWall, f16.MarginalWall, "", target29Wall)
	} else {
		unmeasured(w, cpu16, fmt.Sprintf("≤ %.2f×", target29CPU), noK(targetK))
		unmeasured(w, wall16, fmt.Sprintf("≤ %.2f×", target29Wall), noK(targetK))
	}
	rep.issueSelfRows(w, b16, f16, okb && okf)
	rootWall, rootCPU := "root alone (K=0), one turn: wall", "root alone (K=0), one turn: CPU"
	if b0, ok := findRow(rep.Timing, 0); ok {
		f0, _ := findRow(rep.FloorTiming, 0)
		ratioRow(w, rootWall, b0.Wall, f0.Wall, "", target29Root)
		ratioRow(w, rootCPU, b0.CPU, f0.CPU, "", target29Root)
	} else {
		unmeasured(w, rootWall, fmt.Sprintf("≤ %.2f×", target29Root), noK(0))
		unmeasured(w, rootCPU, fmt.Sprintf("≤ %.2f×", target29Root), noK(0))
	}
	spawn1, records1 := "spawn latency, K=1: tool_use sent → child's first request (the model's side)", "the same, brood's records: queued → first request"
	if b1, ok := findRow(rep.Timing, 1); ok {
		f1, _ := findRow(rep.FloorTiming, 1)
		ratioRow(w, spawn1, b1.ModelSpawn, f1.ModelSpawn, "", target29Spawn)
		floors := fmt.Sprintf("exec %s", ms(rep.Floor.ExecWall))
		if f := rep.Floor; f.IdleWall > 0 {
			floors += fmt.Sprintf(", idle %s start %s", f.IdleArgs, ms(f.IdleWall))
		}
		absRow(records1, b1.Spawn, floors, target29Records)
	} else {
		unmeasured(w, spawn1, fmt.Sprintf("≤ %.2f×", target29Spawn), noK(1))
		unmeasured(w, records1, "≤ "+ms(target29Records), noK(1))
	}
	spawn16 := fmt.Sprintf("spawn latency, K=%d (median, the model's side)", targetK)
	if okb {
		absRow(spawn16, b16.ModelSpawn, ms(f16.ModelSpawn), target29Spawn16)
	} else {
		unmeasured(w, spawn16, "≤ "+ms(target29Spawn16), noK(targetK))
	}
	if m16, ok := findRow(rep.Model, targetK); ok {
		fm, _ := findRow(rep.FloorModel, targetK)
		mr := ratio(m16.Wall, m16.ModelTime)
		fmt.Fprintf(w, "| total ÷ model time, %s latency, K=%d | %.3f | %.3f | | ≤ %.2f | %s |\n",
			rep.Config.ModelLatency, targetK, mr, ratio(fm.Wall, fm.ModelTime), target29ModelRat, verdict(mr <= target29ModelRat))
	} else {
		unmeasured(w, fmt.Sprintf("total ÷ model time, K=%d", targetK), fmt.Sprintf("≤ %.2f", target29ModelRat), rep.noModelRuns())
	}
}

// noModelRuns says why the run has no K=16 run with model latency.
func (rep *Report) noModelRuns() string {
	if rep.Config.ModelLatency < 0 {
		return "--model-latency off"
	}
	return fmt.Sprintf("--model-ks has no %d", targetK)
}

// issueSelfRows are the "only brood installed" rows (--self-child):
// children re-running brood against brood-child's in the same run, the
// issue's target, and against the floor for information.
func (rep *Report) issueSelfRows(w io.Writer, b16, f16 Row, ok bool) {
	s16, okSelf := findRow(rep.SelfTiming, targetK)
	if !ok || !okSelf {
		why := "no --self-child"
		if rep.Config.SelfChild {
			why = noK(targetK)
		}
		unmeasured(w, fmt.Sprintf("only brood installed (children re-run it): marginal CPU, K=%d, against brood-child's", targetK), fmt.Sprintf("≤ %.2f×", target29Self), why)
		unmeasured(w, fmt.Sprintf("only brood installed: marginal wall, K=%d, against brood-child's", targetK), fmt.Sprintf("≤ %.2f×", target29Self), why)
		return
	}
	if rep.Child == rep.Config.Brood {
		fmt.Fprintln(w, "| only brood installed (--self-child) | | | | | the children run brood itself already: the rows below measure the same setup twice |")
	}
	child := filepath.Base(rep.Child)
	ratioRow(w, fmt.Sprintf("only brood installed (children re-run it): marginal CPU, K=%d, against %s's (the floor column) in the same run", targetK, child),
		s16.MarginalCPU, b16.MarginalCPU, "", target29Self)
	ratioRow(w, fmt.Sprintf("only brood installed: marginal wall, K=%d, against %s's (the floor column)", targetK, child), s16.MarginalWall, b16.MarginalWall, "", target29Self)
	for _, c := range []struct {
		what        string
		self, floor time.Duration
	}{{"CPU", s16.MarginalCPU, f16.MarginalCPU}, {"wall", s16.MarginalWall, f16.MarginalWall}} {
		r := belowNoise
		if c.self > 0 && c.floor > 0 {
			r = fmt.Sprintf("%.2f×", ratio(c.self, c.floor))
		}
		fmt.Fprintf(w, "| only brood installed: marginal %s, K=%d, against the floor (for information) | %s | %s | %s | | |\n", c.what, targetK, ms(c.self), ms(c.floor), r)
	}
}

// issueMemoryRows are the table's memory rows, of the sampled runs: with
// model latency when there are such runs (every child live at once), else
// without.
func (rep *Report) issueMemoryRows(w io.Writer) {
	rows, frows, when := rep.Model, rep.FloorModel, fmt.Sprintf("%s model latency", rep.Config.ModelLatency)
	if len(rows) == 0 {
		rows, frows, when = rep.Timing, rep.FloorTiming, "no model latency"
	}
	// memRow writes one memory figure against the floor's; target 0: none.
	memRow := func(name string, got, floor int64, target float64) {
		t, v := " ", " " // empty cells
		if target > 0 {
			t = fmt.Sprintf(" ≤ %.2f× ", target)
		}
		if got <= 0 || floor <= 0 {
			fmt.Fprintf(w, "| %s (%s) | %s | %s | – |%s| not measured (--sample off) |\n", name, when, mem(got), mem(floor), t)
			return
		}
		r := float64(got) / float64(floor)
		if target > 0 {
			v = " " + verdict(r <= target) + " "
		}
		fmt.Fprintf(w, "| %s (%s) | %s | %s | %.2f× |%s|%s|\n", name, when, mem(got), mem(floor), r, t, v)
	}
	pss := fmt.Sprintf("peak summed PSS, parent + %d children", targetK)
	m16, okm := findRow(rep.Model, targetK)
	switch {
	case okm:
		fm, _ := findRow(rep.FloorModel, targetK)
		memRow(pss, m16.PSSKB, fm.PSSKB, target29PSS)
	case rep.Config.Sample < 0:
		unmeasured(w, pss, fmt.Sprintf("≤ %.2f×", target29PSS), "--sample off")
	default:
		unmeasured(w, pss, fmt.Sprintf("≤ %.2f×", target29PSS), rep.noModelRuns())
	}
	if b16, ok := findRow(rows, targetK); ok {
		f16, _ := findRow(frows, targetK)
		memRow("a child's private (anonymous) memory, median child", b16.ChildAnonKB, f16.ChildAnonKB, 0)
	}
	for _, k := range []int{0, targetK} {
		b, okb := findRow(rows, k)
		f, okf := findRow(frows, k)
		if okb && okf {
			memRow(fmt.Sprintf("the root's peak private (anonymous) memory, K=%d", k), b.RootAnonKB, f.RootAnonKB, 0)
		}
	}
}

// comparedAgent says the compared command is another agent or build, not
// this brood run cold (--warm without --compare).
func (rep *Report) comparedAgent() bool {
	_, ok := findRow(rep.CompareTiming, targetK)
	return ok && !rep.Config.coldSelf
}

// issueCompareRow is the issue's last row: brood's marginal wall per
// subagent at K=16 against the compared command's (the issue compares
// Claude Code on the same fake).
func (rep *Report) issueCompareRow(w io.Writer) {
	b, okb := findRow(rep.Timing, targetK)
	c, _ := findRow(rep.CompareTiming, targetK)
	if !okb {
		return
	}
	ratioRow(w, fmt.Sprintf("marginal wall per subagent, K=%d, against `%s` (its figure in the floor column)", targetK, strings.Join(rep.Config.Compare, " ")),
		b.MarginalWall, c.MarginalWall, "", target29Compare)
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
