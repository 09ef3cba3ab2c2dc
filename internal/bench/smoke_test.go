package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/bench"
	"github.com/broodhq/brood/internal/testbrood"
)

// asBrood makes the test binary brood itself, so the smoke test runs the
// real CLI, provider code and child processes without a separate build.
// Children inherit it through the environment brood passes them.
const asBrood = "BROOD_BENCH_TEST_AS_BROOD"

func TestMain(m *testing.M) { testbrood.Main(m, asBrood) }

// TestSmoke runs the harness once at K=0 and K=2, with and without model
// latency, and checks that every figure is there and sane. It asserts no
// timing: the machine is shared and CI is slower still.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a floor binary and runs real processes")
	}
	rep, dir := smokeReport(t)
	f := rep.Floor
	checkKept(t, dir)
	if f.ExecWall <= 0 || f.ExecCPU <= 0 || f.RTT <= 0 || f.RTTFresh <= 0 {
		t.Errorf("floor has a zero figure: %+v", f)
	}
	if len(rep.Timing) != 2 || len(rep.Model) != 2 {
		t.Fatalf("want 2 timing and 2 model rows, got %d and %d", len(rep.Timing), len(rep.Model))
	}
	for _, rows := range [][]bench.Row{rep.Timing, rep.Model} {
		for _, r := range rows {
			if r.Wall <= 0 || r.CPU <= 0 || r.PSSKB <= 0 || r.RSSKB < r.PSSKB {
				t.Errorf("K=%d: wall %s, cpu %s, pss %d KiB, rss %d KiB: want all positive and RSS ≥ PSS", r.K, r.Wall, r.CPU, r.PSSKB, r.RSSKB)
			}
			if r.Children != r.K || r.Done != r.K {
				t.Errorf("K=%d: %d dispatch dirs, %d done; want %d", r.K, r.Children, r.Done, r.K)
			}
			if r.K == 0 {
				continue
			}
			if r.Spawn <= 0 || r.SpawnToolUse <= 0 {
				t.Errorf("K=%d: spawn latency %s / %s, want positive", r.K, r.Spawn, r.SpawnToolUse)
			}
			if r.Seen < 1+r.K {
				t.Errorf("K=%d: saw %d processes, want at least the root and its %d children", r.K, r.Seen, r.K)
			}
			// The marginal cost is a difference of two timed runs: on a
			// loaded machine it may even come out negative, so the smoke
			// test checks how it is derived, never its size or sign.
			base := rows[0]
			if wantW, wantC := (r.Wall-base.Wall)/time.Duration(r.K), (r.CPU-base.CPU)/time.Duration(r.K); r.MarginalWall != wantW || r.MarginalCPU != wantC {
				t.Errorf("K=%d: marginal wall %s, cpu %s; want (K−K0)/K = %s, %s", r.K, r.MarginalWall, r.MarginalCPU, wantW, wantC)
			}
		}
	}
	for _, r := range rep.Model {
		if r.ModelTime <= 0 || r.Wall < r.ModelTime {
			t.Errorf("K=%d: total %s is less than the model time %s the script implies", r.K, r.Wall, r.ModelTime)
		}
	}
	if len(rep.CompareTiming) != 2 || len(rep.CompareModel) != 2 {
		t.Fatalf("want 2 compared timing and model rows, got %d and %d", len(rep.CompareTiming), len(rep.CompareModel))
	}
	for _, rows := range [][]bench.Row{rep.Timing, rep.CompareTiming, rep.CompareModel} {
		for _, r := range rows {
			if r.ChildRequests != r.K {
				t.Errorf("K=%d: the fake saw %d children reach it, want %d", r.K, r.ChildRequests, r.K)
			}
		}
	}
	checkTrace(t, rep.Timing)
	if len(rep.FloorTiming) == 0 || rep.FloorTiming[0].K != 0 {
		t.Errorf("no floor row at K=0: %+v", rep.FloorTiming)
	} else {
		checkRootTrace(t, rep.FloorTiming[0], "floor", []string{"main", "first request", "model", "done", "exit", "total"})
	}
	checkFloorRuns(t, rep)
	if len(rep.Writers) != 3 {
		t.Fatalf("writer rows: %+v, want a reader, an in-place and an isolated writer", rep.Writers)
	}
	for _, w := range rep.Writers {
		if w.Files != 200 || w.Runs != 1 || w.Done != 1 || w.Wall <= 0 {
			t.Errorf("writer run %+v: want one run on 200 files, done", w)
		}
	}
	checkExtras(t, rep)
	if f.IdleWall <= 0 || f.IdleArgs == "" {
		t.Errorf("no idle start measured: %+v", f)
	}
	var b strings.Builder
	rep.Markdown(&b)
	for _, want := range []string{"### Floor", "| 2 |", "### Targets (issue 18", "idle start", "### brood against", "### Spawn trace", "### The root alone (K=0), stage by stage", "floor (bare SDK program)", "### Issue 29's table", "| root alone (K=0), one turn: CPU |", "Package initialisers", "### Writers on large trees"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

// checkTrace: with Trace, every child's spawn is broken into the parent's
// and the child's stages, and the stages account for the whole interval
// the fake measured (tool_use sent → first request, on another clock).
func checkTrace(t *testing.T, rows []bench.Row) {
	t.Helper()
	for _, r := range rows {
		if r.K == 0 {
			if len(r.Stages) != 0 {
				t.Errorf("K=0: %d trace stages, want none", len(r.Stages))
			}
			checkRootTrace(t, r, "brood", []string{"main", "settings", "prepared", "assembled", "first request", "model", "done", "exit", "total"})
			continue
		}
		got := map[string]bench.StageRow{}
		for _, s := range r.Stages {
			got[s.Name] = s
		}
		for _, name := range []string{"dispatch", "records", "setup", "acquire", "cgroup", "cgroup enter", "landlock", "exec", "init", "envelope", "sandbox", "ready", "first request", "total"} {
			if s, ok := got[name]; !ok || s.N != r.K*r.Runs {
				t.Errorf("K=%d: stage %q traced for %d children, want %d: %+v", r.K, name, s.N, r.K*r.Runs, r.Stages)
			}
		}
		var sum time.Duration
		for _, s := range r.Stages[:len(r.Stages)-1] {
			sum += s.Mean
		}
		if tot := got["total"]; tot.Mean <= 0 || sum > tot.Mean || tot.Mean-sum > time.Duration(len(r.Stages)) {
			t.Errorf("K=%d: stage means sum to %s, total %s: a gap or an overlap", r.K, sum, tot.Mean)
		}
	}
}

// checkRootTrace: the root's own run (K=0) is broken into its stages, from
// the bench's exec to its reaping, every run, and they add up to the
// whole (within the wall time the bench measured on another clock).
func checkRootTrace(t *testing.T, r bench.Row, who string, stages []string) {
	t.Helper()
	got := map[string]bench.StageRow{}
	var sum time.Duration
	for _, s := range r.RootStages {
		got[s.Name] = s
		if s.Name != "total" {
			sum += s.Mean
		}
	}
	for _, name := range stages {
		if s, ok := got[name]; !ok || s.N != r.Runs {
			t.Errorf("K=0, %s: root stage %q traced in %d runs, want %d: %+v", who, name, s.N, r.Runs, r.RootStages)
		}
	}
	if tot := got["total"]; tot.Mean <= 0 || sum > tot.Mean || tot.Mean-sum > time.Duration(len(r.RootStages)) || tot.Mean > 2*r.Wall {
		t.Errorf("K=0, %s: root stages sum to %s, total %s, wall %s: a gap, an overlap or another clock", who, sum, tot.Mean, r.Wall)
	}
}

// checkFloorRuns: the floor of a whole run ran beside every brood run, its
// children reached the fake, and the model's side of the spawn latency is
// measured for both.
func checkFloorRuns(t *testing.T, rep *bench.Report) {
	t.Helper()
	if len(rep.FloorTiming) != len(rep.Timing) || len(rep.FloorModel) != len(rep.Model) {
		t.Fatalf("floor rows %d/%d, want %d/%d", len(rep.FloorTiming), len(rep.FloorModel), len(rep.Timing), len(rep.Model))
	}
	for i, f := range rep.FloorTiming {
		b := rep.Timing[i]
		if f.K != b.K || f.Runs != b.Runs || f.ChildRequests != f.K || f.Wall <= 0 || f.CPU <= 0 || f.PSSKB <= 0 {
			t.Errorf("floor K=%d: %+v", b.K, f)
		}
		if b.K > 0 && (f.ModelSpawn <= 0 || b.ModelSpawn <= 0 || f.ChildAnonKB <= 0 || b.ChildAnonKB <= 0) {
			t.Errorf("K=%d: model-side spawn brood %s floor %s, child anon brood %d floor %d KiB: want all positive",
				b.K, b.ModelSpawn, f.ModelSpawn, b.ChildAnonKB, f.ChildAnonKB)
		}
	}
}

// smokeReport runs the harness once at K=0 and K=2, with and without model
// latency, with every option on.
func smokeReport(t *testing.T) (*bench.Report, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The floor of a whole run (a bare SDK parent and its children),
	// interleaved with brood's runs.
	wd, _ := os.Getwd()
	mod, err := bench.FindModule(wd)
	if err != nil {
		t.Fatal(err)
	}
	floor := filepath.Join(t.TempDir(), "floorchild")
	if err := bench.BuildPackage(ctx, mod, "./internal/bench/floorchild", floor); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rep, err := bench.Run(ctx, bench.Config{
		FloorChild: floor, Keep: true,
		Brood: exe, Dir: dir, Ks: []int{0, 2}, Reps: 1,
		ModelKs: []int{0, 2}, ModelLatency: 20 * time.Millisecond, ModelReps: 1,
		FloorReps: 3, Sample: time.Millisecond, Env: []string{asBrood + "=1"},
		// Brood against itself: the --compare path, with real processes.
		Compare: []string{exe, "run", "--model", "anthropic/claude-bench"},
		Trace:   true, SelfChild: true,
		// One reader, one in-place and one isolated writer on a tree.
		WriterFiles: []int{200}, WriterReps: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep, dir
}

// checkExtras: the self-child runs, the package init costs and the writer
// runs are all there.
func checkExtras(t *testing.T, rep *bench.Report) {
	t.Helper()
	f := rep.Floor
	if len(rep.SelfTiming) != len(rep.Timing) || rep.SelfTiming[1].ChildRequests != rep.SelfTiming[1].K {
		t.Errorf("self-child rows: %+v", rep.SelfTiming)
	}
	for _, c := range []bench.InitCost{f.RootInit, f.ChildInit} {
		if c.Binary == "" || c.Clock <= 0 || c.Bytes <= 0 || len(c.Heaviest) == 0 {
			t.Errorf("package init cost not measured: %+v", c)
		}
	}
}

// checkKept: with Keep, every earlier run's records stay, moved aside (the
// floor's and the compared command's runs follow brood's, so brood's own
// are only there).
func checkKept(t *testing.T, dir string) {
	t.Helper()
	if kept, _ := filepath.Glob(filepath.Join(dir, "trash", "*", "dispatch", "*", "envelope.json")); len(kept) == 0 {
		t.Errorf("Keep: no run's dispatch/*/envelope.json under %s", filepath.Join(dir, "trash"))
	}
}
