package bench

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/taskdir"
)

// TestFiguresComeFromTheirRuns: walls, CPU and latencies are read from the
// runs nothing sampled, memory from the sampled runs alone, so the
// sampler's /proc reads (which triple a bare program's wall) never reach a
// wall figure, and a run without the sampler reports no memory.
func TestFiguresComeFromTheirRuns(t *testing.T) {
	ms := time.Millisecond
	timed := func(k int, wall time.Duration) *Sample {
		return &Sample{K: k, Concurrency: 5, Wall: wall, CPU: wall / 2, Children: k, Done: k, ChildRequests: k,
			SpawnQueued: []time.Duration{wall / 4}, ModelSpawn: []time.Duration{wall / 5}}
	}
	sampled := func(k int, wall time.Duration, pss int64) *Sample {
		s := timed(k, wall)
		s.Sampled = true
		s.Mem = TreeMemory{PeakPSSKB: pss, PeakRSSKB: 2 * pss, PeakProcs: 1 + k, Seen: 2 + k, ChildAnonKB: pss / 10, RootAnonKB: pss / 4, Samples: 9}
		return s
	}
	for _, c := range []struct {
		name string
		byK  map[int][]*Sample
		// want: K=0's wall, K=1's marginal wall, K=1's spawn and memory
		wall0, marginal1, spawn1 time.Duration
		pss1, rootAnon1          int64
		runs, memRuns            int
	}{{
		// The shape of verify29's report: the sampled K=0 runs far slower
		// than the timed ones, so mixed in they made K=1's marginal wall
		// negative.
		name: "sampler on",
		byK: map[int][]*Sample{
			0: {timed(0, 8*ms), sampled(0, 150*ms, 40<<10), timed(0, 9*ms), sampled(0, 160*ms, 42<<10), timed(0, 10*ms), sampled(0, 170*ms, 44<<10)},
			1: {timed(1, 20*ms), sampled(1, 60*ms, 50<<10), timed(1, 22*ms), sampled(1, 61*ms, 52<<10), timed(1, 24*ms), sampled(1, 62*ms, 54<<10)},
		},
		wall0: 9 * ms, marginal1: 13 * ms, spawn1: 5500 * time.Microsecond, pss1: 52 << 10, rootAnon1: 13 << 10, runs: 3, memRuns: 3,
	}, {
		name: "sampler off",
		byK: map[int][]*Sample{
			0: {timed(0, 8*ms), timed(0, 9*ms), timed(0, 10*ms)},
			1: {timed(1, 20*ms), timed(1, 22*ms), timed(1, 24*ms)},
		},
		wall0: 9 * ms, marginal1: 13 * ms, spawn1: 5500 * time.Microsecond, runs: 3,
	}} {
		t.Run(c.name, func(t *testing.T) {
			rows := rowsOf([]int{0, 1}, c.byK, 0)
			r0, r1 := rows[0], rows[1]
			if r0.Wall != c.wall0 || r0.CPU != c.wall0/2 {
				t.Errorf("K=0 wall %s CPU %s, want %s and %s: the timed runs' alone", r0.Wall, r0.CPU, c.wall0, c.wall0/2)
			}
			if r1.MarginalWall != c.marginal1 {
				t.Errorf("K=1 marginal wall %s, want %s", r1.MarginalWall, c.marginal1)
			}
			if r1.Spawn != c.spawn1 || r1.ModelSpawn != 22*ms/5 {
				t.Errorf("K=1 spawn %s, model's side %s; want %s, %s (timed runs)", r1.Spawn, r1.ModelSpawn, c.spawn1, 22*ms/5)
			}
			if r1.PSSKB != c.pss1 || r1.RSSKB != 2*c.pss1 || r1.RootAnonKB != c.rootAnon1 || r1.ChildAnonKB != c.pss1/10 {
				t.Errorf("K=1 memory PSS %d RSS %d root %d child %d KiB; want %d, %d, %d, %d (sampled runs)",
					r1.PSSKB, r1.RSSKB, r1.RootAnonKB, r1.ChildAnonKB, c.pss1, 2*c.pss1, c.rootAnon1, c.pss1/10)
			}
			if r1.Runs != c.runs || r1.MemRuns != c.memRuns || r1.Children != 1 || r1.Done != 1 {
				t.Errorf("K=1 runs %d, memory runs %d, children %d, done %d; want %d, %d, 1, 1", r1.Runs, r1.MemRuns, r1.Children, r1.Done, c.runs, c.memRuns)
			}
		})
	}
}

// TestMarginalBelowNoise: a marginal figure at or below zero (a difference
// of two medians the noise exceeds) is never printed as a ratio or judged
// against a target.
func TestMarginalBelowNoise(t *testing.T) {
	ms := time.Millisecond
	rep := &Report{
		Config: Config{Brood: "/b/brood", Sample: 5 * ms, Reps: 3},
		Child:  "/b/brood-child",
		Floor:  Floor{ExecWall: ms, ExecCPU: ms, ChildWall: 4 * ms, ChildCPU: 4 * ms},
		Timing: []Row{{K: 0, Wall: 120 * ms, CPU: 10 * ms}, {K: 1, Wall: 48 * ms, CPU: 11 * ms, MarginalWall: -72 * ms, MarginalCPU: ms},
			{K: 16, MarginalWall: -2 * ms, MarginalCPU: 5 * ms}, {K: 64, MarginalWall: 3 * ms, MarginalCPU: 6 * ms}},
		FloorTiming: []Row{{K: 0, Wall: 9 * ms, CPU: 8 * ms}, {K: 1}, {K: 16, MarginalWall: 4 * ms, MarginalCPU: -ms}},
	}
	var b strings.Builder
	rep.Markdown(&b)
	out := b.String()
	for _, want := range []string{
		"| -72.0 ms (below the noise) |",
		"| marginal CPU per subagent, K=16 | 5.00 ms | -1.00 ms | – | ≤ 1.15× | below the noise: not measured |",
		"| marginal wall per subagent, K=16 | -2.00 ms | 4.00 ms | – | ≤ 1.05× | below the noise: not measured |",
		"| marginal wall per subagent at K=16 ÷ bare-SDK child | -2.00 ms | 4.00 ms | – | ≤ 1.05× | below the noise |",
		"| 64 | 6.00 ms | 1.20× | 3.00 ms | below the noise |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"-72.0 ms (-", "-2.00 ms (-", "| -0.50× |"} {
		if strings.Contains(out, bad) {
			t.Errorf("report has a negative figure as a ratio (%q):\n%s", bad, out)
		}
	}
}

// TestReportSaysWhichRuns: the report says which runs its figures come
// from, and with the sampler off, says the memory figures are not
// measured rather than printing zeros (or "met" for a zero PSS).
func TestReportSaysWhichRuns(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name        string
		sample      time.Duration
		pss         int64
		want, never []string
	}{{
		name: "sampled", sample: 5 * ms, pss: 80 << 10,
		want: []string{"Wall, CPU and spawn latencies: runs that nothing reads while they run. PSS, RSS, processes and anonymous memory: as many runs again",
			"every 5ms", "(medians of 3 runs; memory of 3 sampled runs)", "| 16 | 16 | 2000 ms | 0.00 ms | 80.0 MiB | – | 0 / 0 | – |",
			"| peak summed PSS, parent + 16 children (500ms model latency) | 80.0 MiB | 40.0 MiB | 2.00× | ≤ 1.50× | **missed** |"},
	}, {
		name: "sampler off", sample: -time.Second,
		want: []string{"The memory sampler is off (--sample): no memory figure.", "| 16 | 16 | 2000 ms | 0.00 ms | – | – | 0 / 0 | – |", "no memory sampled (--sample off)",
			"| summed PSS, parent + 16 live children | – | | | ≤ 60 MiB | not measured (--sample off) |",
			"| peak summed PSS, parent + 16 children (500ms model latency) | – | – | – | ≤ 1.50× | not measured (--sample off) |"},
		never: []string{"| 0.0 MiB | 0.0 MiB |", "memory of"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			memRuns := 0
			if c.pss > 0 {
				memRuns = 3
			}
			rep := &Report{
				Config:      Config{Brood: "/b/brood", Sample: c.sample, Reps: 3, ModelReps: 3, ModelLatency: 500 * ms},
				Child:       "/b/brood-child",
				Floor:       Floor{ExecWall: ms, ChildWall: 4 * ms},
				Timing:      []Row{{K: 0, Runs: 3, MemRuns: memRuns}, {K: 16, Runs: 3, MemRuns: memRuns, Wall: 2000 * ms, Concurrency: 16, PSSKB: c.pss}},
				FloorTiming: []Row{{K: 0}, {K: 16}},
				Model:       []Row{{K: 0, MemRuns: memRuns}, {K: 16, Wall: 2100 * ms, ModelTime: 2000 * ms, PSSKB: c.pss}},
				FloorModel:  []Row{{K: 0}, {K: 16, PSSKB: c.pss / 2}},
			}
			var b strings.Builder
			rep.Markdown(&b)
			out := b.String()
			for _, want := range c.want {
				if !strings.Contains(out, want) {
					t.Errorf("report lacks %q:\n%s", want, out)
				}
			}
			for _, bad := range c.never {
				if strings.Contains(out, bad) {
					t.Errorf("report has %q:\n%s", bad, out)
				}
			}
		})
	}
}

// TestIssueTableCompareRow: with --compare, issue 29's table has its last
// row, brood's marginal wall against the compared command's with the
// issue's target; not when the compared command is this brood run cold
// (--warm), and alone when the run has no floor.
func TestIssueTableCompareRow(t *testing.T) {
	ms := time.Millisecond
	row := "| marginal wall per subagent, K=16, against `claude -p --model claude-bench` (its figure in the floor column) | 22.0 ms | 92.0 ms | 0.24× | ≤ 0.10× | **missed** |"
	for _, c := range []struct {
		name     string
		coldSelf bool
		floor    bool
		want     []string
		never    []string
	}{
		{name: "another agent", floor: true, want: []string{row, "| marginal wall per subagent, K=16 | 22.0 ms | 8.00 ms |"}},
		{name: "no floor", want: []string{row, "No floor in this run (it is built from brood's source tree: --src DIR)"}, never: []string{"root alone"}},
		{name: "brood cold (--warm)", coldSelf: true, floor: true, never: []string{"against `claude"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := &Report{
				Config:        Config{Brood: "/b/brood", Compare: []string{"claude", "-p", "--model", "claude-bench"}, coldSelf: c.coldSelf},
				Child:         "/b/brood-child",
				Timing:        []Row{{K: 0}, {K: 16, MarginalWall: 22 * ms}},
				CompareTiming: []Row{{K: 0}, {K: 16, MarginalWall: 92 * ms}},
			}
			if c.floor {
				rep.FloorTiming = []Row{{K: 0, Wall: 6 * ms}, {K: 16, MarginalWall: 8 * ms}}
			}
			var b strings.Builder
			rep.issueTargets(&b)
			out := b.String()
			for _, want := range c.want {
				if !strings.Contains(out, want) {
					t.Errorf("table lacks %q:\n%s", want, out)
				}
			}
			for _, bad := range c.never {
				if strings.Contains(out, bad) {
					t.Errorf("table has %q:\n%s", bad, out)
				}
			}
		})
	}
}

// TestProjectsRunNoAutoGC: the bench's projects (the small one and the
// writers' large trees) run no automatic gc or maintenance, so no detached
// `git gc --auto` repacks while a run is timed, whichever git commits.
func TestProjectsRunNoAutoGC(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(dir string) (*project, error)
	}{
		{"project", func(dir string) (*project, error) { return newProject(dir, true) }},
		{"writers' tree", func(dir string) (*project, error) { return newTreeProject(dir, 150) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := c.make(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for key, want := range map[string]string{"gc.auto": "0", "maintenance.auto": "false"} {
				out, err := exec.Command("git", "-C", p.root, "config", "--local", "--get", key).Output()
				if got := strings.TrimSpace(string(out)); err != nil || got != want {
					t.Errorf("git config %s = %q (%v), want %q", key, got, err, want)
				}
			}
		})
	}
}

// TestIssueTableLabels: the queued → first request row names both floors
// the issue names (exec and the idle child start); with --warm the table
// says it is of the warm runs; with --self-child when the children run
// brood already, it says the rows would measure the same setup twice.
func TestIssueTableLabels(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name   string
		cfg    Config
		child  string
		want   []string
		absent []string
	}{
		{name: "brood-child", cfg: Config{Brood: "/b/brood"}, child: "/b/brood-child",
			want:   []string{"| the same, brood's records: queued → first request | 4.00 ms | exec 1.00 ms, idle brood-child start 3.30 ms | | ≤ 5.00 ms | met |"},
			absent: []string{"BROOD_WARM", "| only brood installed (--self-child)"}},
		{name: "warm", cfg: Config{Brood: "/b/brood", Warm: 4, coldSelf: true}, child: "/b/brood-child",
			want: []string{"Children run brood-child, started ahead of their tasks (BROOD_WARM=4: these are the warm runs; the cold ones are the compared command's)."}},
		{name: "self-child, only brood", cfg: Config{Brood: "/b/brood", SelfChild: true}, child: "/b/brood",
			want: []string{"Children run brood itself (only brood installed).", "| only brood installed (--self-child) | | | | | the children run brood itself already: the rows below measure the same setup twice |"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := &Report{
				Config: c.cfg, Child: c.child,
				Floor:       Floor{ExecWall: ms, IdleWall: 3300 * time.Microsecond, IdleArgs: "brood-child"},
				Timing:      []Row{{K: 0, Wall: 12 * ms}, {K: 1, Spawn: 4 * ms}, {K: 16, MarginalWall: 9 * ms}},
				FloorTiming: []Row{{K: 0, Wall: 6 * ms}, {K: 1}, {K: 16, MarginalWall: 4 * ms}},
			}
			if c.cfg.SelfChild {
				rep.SelfTiming = []Row{{K: 0}, {K: 16, MarginalWall: 9 * ms}}
			}
			var b strings.Builder
			rep.issueTargets(&b)
			out := b.String()
			for _, want := range c.want {
				if !strings.Contains(out, want) {
					t.Errorf("table lacks %q:\n%s", want, out)
				}
			}
			for _, bad := range c.absent {
				if strings.Contains(out, bad) {
					t.Errorf("table has %q:\n%s", bad, out)
				}
			}
		})
	}
}

// TestReportRecordsItsSettings: two reports can be told apart: each says
// the flags it ran with, the environment added to brood's included.
func TestReportRecordsItsSettings(t *testing.T) {
	cfg := Config{Brood: "/b/brood", Ks: []int{0, 1, 16}, ModelKs: []int{0, 16}, Env: []string{"GOGC=25"}, Trace: true,
		Compare: []string{"claude", "-p"}, WriterFiles: []int{10000}}
	cfg.defaults()
	var b strings.Builder
	(&Report{Config: cfg, Child: "/b/brood-child"}).Markdown(&b)
	want := "Run with: `--ks 0,1,16 --reps 5 --model-ks 0,16 --model-reps 3 --model-latency 500ms --floor-reps 30 --sample 5ms --provider anthropic --trace --compare \"claude -p\" --writers 10000 --writer-reps 5 --env GOGC=25`."
	if !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
}

// TestIssueTableHasEveryRow: every row of issue 29's table is in the
// report with its target, measured or not; a row the run did not measure
// says which flag would measure it.
func TestIssueTableHasEveryRow(t *testing.T) {
	ms := time.Millisecond
	rows := []string{
		"marginal CPU per subagent, K=16", "marginal wall per subagent, K=16",
		"only brood installed (children re-run it): marginal CPU, K=16", "only brood installed: marginal wall, K=16",
		"root alone (K=0), one turn: wall", "root alone (K=0), one turn: CPU",
		"spawn latency, K=1: tool_use sent → child's first request", "the same, brood's records: queued → first request",
		"spawn latency, K=16 (median, the model's side)", "total ÷ model time", "peak summed PSS, parent + 16 children",
		"marginal wall per subagent, K=16, against",
	}
	for _, c := range []struct {
		name string
		rep  *Report
		want []string
	}{
		{name: "only K=16, nothing else", rep: &Report{
			Config: Config{Brood: "/b/brood", Ks: []int{16}, ModelLatency: -1, Sample: -1}, Child: "/b/brood-child",
			Timing:      []Row{{K: 16, MarginalCPU: 30 * ms, MarginalWall: 20 * ms}},
			FloorTiming: []Row{{K: 16, MarginalCPU: 10 * ms, MarginalWall: 7 * ms}},
		}, want: []string{
			"| root alone (K=0), one turn: wall | – | – | – | ≤ 2.00× | not measured (--ks has no 0) |",
			"| the same, brood's records: queued → first request | – | – | – | ≤ 5.00 ms | not measured (--ks has no 1) |",
			"| only brood installed: marginal wall, K=16, against brood-child's | – | – | – | ≤ 1.05× | not measured (no --self-child) |",
			"| total ÷ model time, K=16 | – | – | – | ≤ 1.03 | not measured (--model-latency off) |",
			"| peak summed PSS, parent + 16 children | – | – | – | ≤ 1.50× | not measured (--sample off) |",
			"| marginal wall per subagent, K=16, against another agent's (Claude Code in the issue) | – | – | – | ≤ 0.10× | not measured (no --compare) |",
		}},
		{name: "model runs without 16", rep: &Report{
			Config: Config{Brood: "/b/brood", Ks: []int{0, 1}, ModelLatency: 500 * ms, ModelKs: []int{0, 1}, SelfChild: true}, Child: "/b/brood-child",
			Timing:      []Row{{K: 0, Wall: 12 * ms, CPU: 10 * ms}, {K: 1, Spawn: 4 * ms, ModelSpawn: 6 * ms}},
			FloorTiming: []Row{{K: 0, Wall: 6 * ms, CPU: 6 * ms}, {K: 1, ModelSpawn: 5 * ms}},
			Model:       []Row{{K: 0, RootAnonKB: 3 << 10}},
			FloorModel:  []Row{{K: 0, RootAnonKB: 2 << 10}},
		}, want: []string{
			"| marginal CPU per subagent, K=16 | – | – | – | ≤ 1.15× | not measured (--ks has no 16) |",
			"| only brood installed (children re-run it): marginal CPU, K=16, against brood-child's | – | – | – | ≤ 1.05× | not measured (--ks has no 16) |",
			"| spawn latency, K=16 (median, the model's side) | – | – | – | ≤ 20.0 ms | not measured (--ks has no 16) |",
			"| total ÷ model time, K=16 | – | – | – | ≤ 1.03 | not measured (--model-ks has no 16) |",
			"| peak summed PSS, parent + 16 children | – | – | – | ≤ 1.50× | not measured (--model-ks has no 16) |",
			"| root alone (K=0), one turn: wall | 12.0 ms | 6.00 ms | 2.00× | ≤ 2.00× | met |",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			c.rep.issueTargets(&b)
			out := b.String()
			for _, r := range rows {
				if !strings.Contains(out, "| "+r) {
					t.Errorf("table has no row %q:\n%s", r, out)
				}
			}
			for _, want := range c.want {
				if !strings.Contains(out, want) {
					t.Errorf("table lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// TestCleanKeepsTheRecordDirectories: between runs the bench moves the
// records aside but keeps the record directories and brood's .gitignore in
// each, so every run is a project's next, not its first (which would make
// the directories and write their .gitignores on the root's path).
func TestCleanKeepsTheRecordDirectories(t *testing.T) {
	p, err := newProject(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	state := taskdir.Open(p.root).StateDir()
	for _, c := range []struct{ dir, record string }{
		{"sessions", "01ABC.jsonl"}, {"outputs", "01ABC.txt"}, {"dispatch", "01ABC"},
	} {
		if err := os.MkdirAll(filepath.Join(state, c.dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{".gitignore", c.record} {
			if err := os.WriteFile(filepath.Join(state, c.dir, f), []byte("*\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := p.clean(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, record string }{
		{"sessions", "01ABC.jsonl"}, {"outputs", "01ABC.txt"}, {"dispatch", "01ABC"},
	} {
		if _, err := os.Stat(filepath.Join(state, c.dir, ".gitignore")); err != nil {
			t.Errorf("%s/.gitignore after clean: %v; want it kept", c.dir, err)
		}
		if _, err := os.Stat(filepath.Join(state, c.dir, c.record)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s/%s after clean: %v; want it moved aside", c.dir, c.record, err)
		}
		if _, err := os.Stat(filepath.Join(p.trash, "1", c.dir, c.record)); err != nil {
			t.Errorf("%s/%s not in the trash: %v", c.dir, c.record, err)
		}
	}
}

// TestRelativeProgramsAreMadeAbsolute: the runs start in the bench's
// project, so --brood, --child and --compare's program given by a path
// relative to where the bench was started are made absolute (before,
// `--brood bin/brood` failed: fork/exec bin/brood: no such file); a bare
// name is still looked up on PATH.
func TestRelativeProgramsAreMadeAbsolute(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{"bin/brood", filepath.Join(wd, "bin", "brood")},
		{"./brood-child", filepath.Join(wd, "brood-child")},
		{"/opt/brood", "/opt/brood"},
		{"claude", "claude"},
		{"", ""},
	} {
		cfg := Config{Brood: c.in, Child: c.in, Compare: []string{c.in, "run"}}
		cfg.defaults()
		if cfg.Brood != c.want || cfg.Child != c.want || cfg.Compare[0] != c.want || cfg.Compare[1] != "run" {
			t.Errorf("%q: brood %q, child %q, compare %q; want %q", c.in, cfg.Brood, cfg.Child, cfg.Compare, c.want)
		}
	}
}
