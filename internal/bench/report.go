package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/spawntrace"
)

// Row is the medians of every run of one K: its wall, CPU and latency
// figures of the timed runs (Runs), its memory figures of the sampled ones
// (MemRuns; none with the sampler off).
type Row struct {
	K, Concurrency, Runs, MemRuns int
	Latency                       time.Duration
	Wall, CPU                     time.Duration
	PSSKB, RSSKB                  int64 // medians of each run's peak summed PSS / RSS
	PeakProcs                     int   // median of the most processes live at once
	Seen                          int   // median of the distinct processes seen (git included)
	// Children is the fewest dispatch directories of any run and Done the
	// fewest results that said done; both equal K in a sound run.
	Children, Done int
	// ChildRequests is the fewest children of any run that reached the
	// model (the fake's count: for any agent, brood or not).
	ChildRequests int
	// Spawn is the median over every child of every run, from its
	// dispatch-log "queued" to its first model request; SpawnToolUse from
	// the end of the parent's tool_use response instead.
	Spawn, SpawnToolUse time.Duration
	// MarginalWall and MarginalCPU are (T(K) − T(0)) / K.
	MarginalWall, MarginalCPU time.Duration
	// ModelTime is the time the script spends in the model: the latency
	// times the number of sequential responses.
	ModelTime time.Duration
	// Stages is the spawn trace (--trace), "total" last; RootStages the
	// root's own run's (K=0).
	Stages, RootStages []StageRow
	// ModelSpawn is the median of every child's tool_use sent → first
	// request, from the fake's log (for any command).
	ModelSpawn time.Duration
	// ChildAnonKB is the median over runs of the median child's peak
	// anonymous memory; RootAnonKB the root's.
	ChildAnonKB, RootAnonKB int64
	// Split is the CPU split between parent side and children
	// (cpusplit.go).
	Split SplitRow
}

// summarize takes the timed runs' walls, CPU and latencies and the sampled
// runs' memory: the sampler's /proc reads slow the tree they read (the
// root alone's wall three times the floor's, a marginal wall below zero),
// and a run without them has no memory figure.
func summarize(ss []*Sample, latency time.Duration) Row {
	r := Row{K: ss[0].K, Concurrency: ss[0].Concurrency, Latency: latency, Children: -1, Done: -1}
	var timed []*Sample
	var wall, cpu, spawn, spawnTU, mspawn []time.Duration
	var pss, rss, procs, seen, canon, ranon []int64
	for _, s := range ss {
		if r.Children < 0 || s.Children < r.Children {
			r.Children = s.Children
		}
		if r.Done < 0 || s.Done < r.Done {
			r.Done = s.Done
		}
		if r.ChildRequests == 0 || s.ChildRequests < r.ChildRequests {
			r.ChildRequests = s.ChildRequests
		}
		if s.Sampled {
			r.MemRuns++
			canon, ranon = append(canon, s.Mem.ChildAnonKB), append(ranon, s.Mem.RootAnonKB)
			pss, rss = append(pss, s.Mem.PeakPSSKB), append(rss, s.Mem.PeakRSSKB)
			procs, seen = append(procs, int64(s.Mem.PeakProcs)), append(seen, int64(s.Mem.Seen))
			continue
		}
		timed = append(timed, s)
		mspawn = append(mspawn, s.ModelSpawn...)
		wall, cpu = append(wall, s.Wall), append(cpu, s.CPU)
		spawn, spawnTU = append(spawn, s.SpawnQueued...), append(spawnTU, s.SpawnToolUse...)
	}
	r.Runs = len(timed)
	r.Wall, r.CPU, r.Spawn, r.SpawnToolUse = median(wall), median(cpu), median(spawn), median(spawnTU)
	r.PSSKB, r.RSSKB = medianInt(pss), medianInt(rss)
	r.PeakProcs, r.Seen = int(medianInt(procs)), int(medianInt(seen))
	r.ModelTime = modelTime(r.K, r.Concurrency, latency)
	r.Stages = stageRows(timed)
	var roots [][]spawntrace.Stage
	for _, s := range timed {
		if len(s.Root) > 0 {
			roots = append(roots, s.Root)
		}
	}
	r.RootStages = summarizeStages(roots, rootStageOwners())
	r.Split = splitRow(timed)
	r.ModelSpawn = median(mspawn)
	r.ChildAnonKB, r.RootAnonKB = medianInt(canon), medianInt(ranon)
	return r
}

// modelTime is the latency times the sequential responses of the script:
// the parent's first turn, two turns per wave of children, the parent's
// answer.
func modelTime(k, conc int, latency time.Duration) time.Duration {
	if k == 0 {
		return latency
	}
	waves := (k + conc - 1) / conc
	return latency * time.Duration(2+2*waves)
}

func (r *Row) marginal(base Row) {
	if r.K == 0 || base.K != 0 {
		return
	}
	r.MarginalWall = (r.Wall - base.Wall) / time.Duration(r.K)
	r.MarginalCPU = (r.CPU - base.CPU) / time.Duration(r.K)
}

// Issue 18's targets: ratios to the floor measured in the same run.
const (
	targetK          = 16
	targetCPUxSDK    = 1.15 // marginal CPU per subagent at K=16 ÷ the bare SDK child's CPU
	targetWallxSDK   = 1.05 // marginal wall per subagent at K=16 ÷ the bare SDK child's wall
	targetSpawnxExec = 3.0  // median spawn latency at K=1 ÷ exec of a static binary
	targetModelRatio = 1.03 // total ÷ model time, with model latency, K=16
	targetPSSMiB     = 60   // summed PSS of the parent and 16 live children
	targetIdlexExec  = 2.0  // a child's idle start ÷ exec of a static binary
)

// Markdown writes the report as the tables docs/performance.md holds.
func (rep *Report) Markdown(w io.Writer) {
	m, f := rep.Machine, rep.Floor
	fmt.Fprintf(w, "Machine: %d CPUs (%s), Linux %s, %s; provider %s; project is a git repository: %v.\n\n",
		m.CPUs, m.CPUModel, m.Kernel, m.GoVersion, rep.Config.Provider, !rep.Config.NoGit)
	fmt.Fprintf(w, "Root: %s; children: %s.\n\n", rep.Config.Brood, rep.Child)
	fmt.Fprintf(w, "Run with: `%s`.\n\n", rep.Config.flags())
	if rep.Config.Warm > 0 {
		fmt.Fprintf(w, "brood runs with BROOD_WARM=%d (pool.warm); the compare command with BROOD_WARM=0.\n\n", rep.Config.Warm)
	}
	rep.sources(w)

	fmt.Fprintln(w, "### Floor (same run)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| figure | wall | CPU | peak RSS |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	fmt.Fprintf(w, "| exec of a static Go binary | %s | %s | %.1f MiB |\n", ms(f.ExecWall), ms(f.ExecCPU), mib(f.ExecRSSKB))
	fmt.Fprintf(w, "| loopback HTTP round trip (kept alive) | %s | | |\n", ms(f.RTT))
	fmt.Fprintf(w, "| loopback HTTP round trip (new connection) | %s | | |\n", ms(f.RTTFresh))
	if f.IdleWall > 0 {
		fmt.Fprintf(w, "| a child's idle start: exec of %s (%s) | %s | %s | |\n", rep.Child, f.IdleArgs, ms(f.IdleWall), ms(f.IdleCPU))
	}
	if f.ChildWall > 0 {
		fmt.Fprintf(w, "| bare Go SDK child: 2 streamed requests + result file | %s | %s | %.1f MiB |\n", ms(f.ChildWall), ms(f.ChildCPU), mib(f.ChildRSSKB))
	}
	fmt.Fprintln(w)
	if rep.Config.FloorChild == "" {
		fmt.Fprint(w, "No SDK floor in this run (the bare SDK child and parent, and issue 29's table with them): they are built from brood's source tree (--src DIR).\n\n")
	}

	fmt.Fprintf(w, "### Delegation cost, no model latency (medians of %d runs%s)\n\n", rep.Config.Reps, rep.memRuns(rep.Timing))
	fmt.Fprintln(w, "Ratios: ×exec = against the static exec floor; ×sdk = against the bare SDK child.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| K | conc | wall | CPU (tree) | peak PSS (sum, sampled runs) | peak RSS (sum, sampled runs) | children / done | processes seen (sampled runs) | marginal wall | marginal CPU | spawn latency (queued→1st request) | spawn latency (tool_use sent→1st request) |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rep.Timing {
		fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %s | %d / %d | %s | %s | %s | %s | %s |\n",
			r.K, r.Concurrency, ms(r.Wall), ms(r.CPU), mem(r.PSSKB), mem(r.RSSKB), r.Children, r.Done, count(r.Seen),
			rep.ratio2(r.MarginalWall, f.ExecWall, f.ChildWall, r.K), rep.ratio2(r.MarginalCPU, f.ExecCPU, f.ChildCPU, r.K),
			rep.ratio1(r.Spawn, f.ExecWall, r.K), rep.ratio1(r.SpawnToolUse, f.ExecWall, r.K))
	}
	fmt.Fprintln(w)

	if len(rep.Model) > 0 {
		fmt.Fprintf(w, "### With %s of model latency per response (medians of %d runs%s)\n\n", rep.Config.ModelLatency, rep.Config.ModelReps, rep.memRuns(rep.Model))
		fmt.Fprintln(w, "| K | conc | total wall | model time (script) | total / model | peak PSS (sum, sampled runs) | peak RSS (sum, sampled runs) | peak live processes (sampled runs) | spawn latency |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, r := range rep.Model {
			fmt.Fprintf(w, "| %d | %d | %s | %s | %.3f | %s | %s | %s | %s |\n",
				r.K, r.Concurrency, ms(r.Wall), ms(r.ModelTime), ratio(r.Wall, r.ModelTime), mem(r.PSSKB), mem(r.RSSKB), count(r.PeakProcs), rep.ratio1(r.Spawn, f.ExecWall, r.K))
		}
		fmt.Fprintln(w)
	}
	rep.traceTable(w)
	rep.rootTraceTable(w)
	rep.cpuSplit(w)
	rep.linearity(w)
	rep.issueTargets(w)
	rep.writerTable(w)
	rep.targets(w)
	rep.compare(w)
}

// linearity writes the parent's side per child at every K from targetK up,
// each as a ratio to K=targetK's: a path that grows linearly in K reads
// about 1.0 (the spawn latency per child too: half of K children start
// before the median one, so it is divided by K).
func (rep *Report) linearity(w io.Writer) {
	var rows []Row
	for _, r := range rep.Timing {
		if r.K >= targetK {
			rows = append(rows, r)
		}
	}
	if len(rows) < 2 || rows[0].K != targetK {
		return
	}
	b := rows[0]
	fmt.Fprintf(w, "### Linearity in K (per subagent; ratio to K=%d)\n\n", targetK)
	fmt.Fprintln(w, "| K | marginal CPU | ratio | marginal wall | ratio | spawn latency (tool_use sent→1st request) ÷ K | ratio | spawn latency (queued→1st request) ÷ K | ratio |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	per := func(d time.Duration, k int) time.Duration { return d / time.Duration(k) }
	for _, r := range rows {
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %.2f× | %s | %.2f× |\n", r.K,
			ms(r.MarginalCPU), marginalRatio(r.MarginalCPU, b.MarginalCPU), ms(r.MarginalWall), marginalRatio(r.MarginalWall, b.MarginalWall),
			ms(per(r.SpawnToolUse, r.K)), ratio(per(r.SpawnToolUse, r.K), per(b.SpawnToolUse, b.K)),
			ms(per(r.Spawn, r.K)), ratio(per(r.Spawn, r.K), per(b.Spawn, b.K)))
	}
	fmt.Fprintln(w)
}

// compare writes brood against the --compare command, K by K, from the
// same interleaved runs.
func (rep *Report) compare(w io.Writer) {
	if len(rep.CompareTiming) == 0 {
		return
	}
	fmt.Fprintf(w, "### brood against `%s` (same fake, interleaved; ratio = brood ÷ it)\n\n", strings.Join(rep.Config.Compare, " "))
	fmt.Fprintln(w, "| K | latency | brood wall | its wall | brood CPU | its CPU | brood marginal wall | its marginal wall | ratio | brood marginal CPU | its marginal CPU | ratio | brood peak PSS | its peak PSS | its children seen | brood spawn (tool_use→1st request) | its | ratio |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, pair := range [][2][]Row{{rep.Timing, rep.CompareTiming}, {rep.Model, rep.CompareModel}} {
		for i, b := range pair[0] {
			if i >= len(pair[1]) {
				break
			}
			c := pair[1][i]
			mw, mc := "–", "–"
			if b.K > 0 {
				mw, mc = marginalRatio(b.MarginalWall, c.MarginalWall), marginalRatio(b.MarginalCPU, c.MarginalCPU)
			}
			// The spawn latency needs the command's dispatch logs (another
			// brood writes them; another agent does not).
			sp := "– | – | –"
			if b.K > 0 && c.SpawnToolUse > 0 {
				sp = fmt.Sprintf("%s | %s | %.2f×", ms(b.SpawnToolUse), ms(c.SpawnToolUse), ratio(b.SpawnToolUse, c.SpawnToolUse))
			}
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s |\n",
				b.K, b.Latency, ms(b.Wall), ms(c.Wall), ms(b.CPU), ms(c.CPU), ms(b.MarginalWall), ms(c.MarginalWall), mw,
				ms(b.MarginalCPU), ms(c.MarginalCPU), mc, mem(b.PSSKB), mem(c.PSSKB), c.ChildRequests, sp)
		}
	}
	fmt.Fprintln(w)
}

// targets writes issue 18's targets, each figure as a ratio to the floor
// of this run, and whether this run met them; with --compare, the same
// figure of the compared command from the same interleaved runs and the
// ratio of brood's to it (where the figure can be measured from outside:
// the spawn latency and the idle start need brood's records and binary).
func (rep *Report) targets(w io.Writer) {
	f := rep.Floor
	cmp := len(rep.CompareTiming) > 0
	fmt.Fprintln(w, "### Targets (issue 18; ratios to this run's floor)")
	fmt.Fprintln(w)
	if cmp {
		fmt.Fprintln(w, "| figure | measured | floor | ratio | target | | compared command | brood ÷ it |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|---:|---:|")
	} else {
		fmt.Fprintln(w, "| figure | measured | floor | ratio | target | |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|")
	}
	// other is the compared command's figure ("" when not measured).
	tail := func(got, other float64, unit func(float64) string) string {
		if !cmp {
			return ""
		}
		if other == 0 {
			return " – | – |"
		}
		return fmt.Sprintf(" %s | %.2f× |", unit(other), got/other)
	}
	msf := func(v float64) string { return ms(time.Duration(v)) }
	row := func(what string, got, floor, other time.Duration, target float64) {
		t := tail(float64(got), float64(other), msf)
		if floor <= 0 {
			fmt.Fprintf(w, "| %s | %s | – | – | ≤ %.2f× | not measured |%s\n", what, ms(got), target, t)
			return
		}
		if got <= 0 {
			fmt.Fprintf(w, "| %s | %s | %s | – | ≤ %.2f× | %s |%s\n", what, ms(got), ms(floor), target, belowNoise, t)
			return
		}
		r := ratio(got, floor)
		fmt.Fprintf(w, "| %s | %s | %s | %.2f× | ≤ %.2f× | %s |%s\n", what, ms(got), ms(floor), r, target, verdict(r <= target), t)
	}
	if r, ok := findRow(rep.Timing, targetK); ok {
		c, _ := findRow(rep.CompareTiming, targetK)
		row(fmt.Sprintf("marginal CPU per subagent at K=%d ÷ bare-SDK child", targetK), r.MarginalCPU, f.ChildCPU, c.MarginalCPU, targetCPUxSDK)
		row(fmt.Sprintf("marginal wall per subagent at K=%d ÷ bare-SDK child", targetK), r.MarginalWall, f.ChildWall, c.MarginalWall, targetWallxSDK)
	}
	if r, ok := findRow(rep.Timing, 1); ok {
		row("median spawn latency at K=1 (queued → 1st request) ÷ static exec", r.Spawn, f.ExecWall, 0, targetSpawnxExec)
	}
	if r, ok := findRow(rep.Model, targetK); ok {
		c, _ := findRow(rep.CompareModel, targetK)
		mr, cr := ratio(r.Wall, r.ModelTime), ratio(c.Wall, c.ModelTime)
		fmt.Fprintf(w, "| total ÷ model time, %s latency, K=%d | %s | %s | %.3f | ≤ %.2f | %s |%s\n",
			rep.Config.ModelLatency, targetK, ms(r.Wall), ms(r.ModelTime), mr, targetModelRatio, verdict(mr <= targetModelRatio),
			tail(mr, cr, func(v float64) string { return fmt.Sprintf("%.3f", v) }))
		pv := verdict(mib(r.PSSKB) <= targetPSSMiB)
		if r.PSSKB <= 0 {
			pv = "not measured (--sample off)"
		}
		fmt.Fprintf(w, "| summed PSS, parent + %d live children | %s | | | ≤ %d MiB | %s |%s\n",
			targetK, mem(r.PSSKB), targetPSSMiB, pv,
			tail(float64(r.PSSKB), float64(c.PSSKB), func(v float64) string { return fmt.Sprintf("%.1f MiB", v/1024) }))
	}
	row(fmt.Sprintf("a child's idle start (%s) ÷ static exec", f.IdleArgs), f.IdleWall, f.ExecWall, 0, targetIdlexExec)
	fmt.Fprintln(w)
}

func findRow(rows []Row, k int) (Row, bool) {
	for _, r := range rows {
		if r.K == k {
			return r, true
		}
	}
	return Row{}, false
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func (rep *Report) ratio1(d, base time.Duration, k int) string {
	if k == 0 {
		return "–"
	}
	return fmt.Sprintf("%s (%.1f×exec)", ms(d), ratio(d, base))
}

func (rep *Report) ratio2(d, exec, child time.Duration, k int) string {
	if k == 0 {
		return "–"
	}
	if d <= 0 {
		return fmt.Sprintf("%s (%s)", ms(d), belowNoise)
	}
	s := fmt.Sprintf("%s (%.1f×exec", ms(d), ratio(d, exec))
	if child > 0 {
		s += fmt.Sprintf(", %.2f×sdk", ratio(d, child))
	}
	return s + ")"
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100 || v <= -100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10 || v <= -10:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}

func mib(kb int64) float64 { return float64(kb) / 1024 }

// mem is a memory figure of the sampled runs: "–" when none sampled.
func mem(kb int64) string {
	if kb <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f MiB", mib(kb))
}

// count is a count of the sampled runs ("–" when none sampled).
func count(n int) string {
	if n <= 0 {
		return "–"
	}
	return strconv.Itoa(n)
}

// belowNoise is what a marginal figure at or below zero reads as instead
// of a ratio: a difference of two medians that the runs' noise exceeds.
const belowNoise = "below the noise"

// marginalRatio is a ÷ b of two marginal figures, unless either is at or
// below zero.
func marginalRatio(a, b time.Duration) string {
	if a <= 0 || b <= 0 {
		return belowNoise
	}
	return fmt.Sprintf("%.2f×", ratio(a, b))
}

// flags are the settings the report was measured with, as `brood bench`'s
// flags, the environment added to brood's included.
func (c Config) flags() string {
	ints := func(xs []int) string {
		var s []string
		for _, x := range xs {
			s = append(s, strconv.Itoa(x))
		}
		return strings.Join(s, ",")
	}
	f := []string{"--ks " + ints(c.Ks), fmt.Sprintf("--reps %d", c.Reps), "--model-ks " + ints(c.ModelKs),
		fmt.Sprintf("--model-reps %d", c.ModelReps), fmt.Sprintf("--model-latency %s", c.ModelLatency),
		fmt.Sprintf("--floor-reps %d", c.FloorReps), fmt.Sprintf("--sample %s", c.Sample), "--provider " + c.Provider}
	if c.Concurrency > 0 {
		f = append(f, fmt.Sprintf("--concurrency %d", c.Concurrency))
	}
	for _, b := range []struct {
		on   bool
		flag string
	}{{c.NoGit, "--no-git"}, {c.Trace, "--trace"}, {c.SelfChild, "--self-child"}} {
		if b.on {
			f = append(f, b.flag)
		}
	}
	if c.Warm > 0 {
		f = append(f, fmt.Sprintf("--warm %d", c.Warm))
	}
	if len(c.Compare) > 0 && !c.coldSelf {
		f = append(f, fmt.Sprintf("--compare %q", strings.Join(c.Compare, " ")))
	}
	if len(c.WriterFiles) > 0 {
		f = append(f, "--writers "+ints(c.WriterFiles), fmt.Sprintf("--writer-reps %d", c.WriterReps))
	}
	for _, e := range c.Env {
		f = append(f, "--env "+e)
	}
	return strings.Join(f, " ")
}

// sources says which runs each figure comes from.
func (rep *Report) sources(w io.Writer) {
	if rep.Config.Sample < 0 {
		fmt.Fprintln(w, "Wall, CPU and spawn latencies: runs that nothing reads while they run. The memory sampler is off (--sample): no memory figure.")
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "Wall, CPU and spawn latencies: runs that nothing reads while they run. PSS, RSS, processes and anonymous memory: "+
		"as many runs again, each after a timed run of the same K (brood, the floor and the compared command alike), "+
		"reading every process's /proc/PID/smaps_rollup every %s; their walls are not used (the reads slow the tree they read).\n\n", rep.Config.Sample)
}

// memRuns is a table heading's count of the sampled runs.
func (rep *Report) memRuns(rows []Row) string {
	if len(rows) == 0 || rows[0].MemRuns == 0 {
		return ""
	}
	return fmt.Sprintf("; memory of %d sampled runs", rows[0].MemRuns)
}
