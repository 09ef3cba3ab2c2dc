// Package bench measures what delegation costs: it runs the real brood
// binary against a loopback fake model (Anthropic Messages or OpenAI Chat
// Completions, streamed as SSE) that scripts a parent asking for K explore
// subagents at once, each child reading one file and answering, and the
// parent answering last. For each K it reports wall time, the CPU of the
// whole process tree, the summed PSS and RSS of the live tree, processes
// spawned, the marginal cost per subagent and the spawn latency, and with
// model latency switched on, total time against the time the script spends
// in the model. The floor (exec of a static Go binary, a loopback HTTP
// round trip, a bare Go SDK child) is measured in the same run so every
// figure reads as a ratio on the same machine at the same moment. Walls,
// CPU and latencies come from runs nothing reads while they run; memory
// from runs of their own, interleaved, that sample /proc.
//
// It is a tool, not part of the runtime: nothing in brood imports it but
// the `brood bench` command. It must never import the agent loop or the
// delegation packages — it measures brood strictly from the outside.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/childexe"
)

// Config says what to measure. Zero values take the defaults in brackets.
type Config struct {
	// Brood is the binary under test (required).
	Brood string
	// FloorChild is a built internal/bench/floorchild ("" skips that floor).
	FloorChild string
	// Child is the binary brood runs for each subagent (BROOD_CHILD_EXE);
	// "" leaves the choice to brood (brood-child beside it when it is the
	// same build, else brood itself). Its idle start is measured either way.
	Child string
	// Dir holds the project and the floor binary [a new temporary dir].
	Dir string
	// Ks are the subagent counts of the timing runs [0 1 4 16 64 256].
	Ks []int
	// Reps is how many times each K runs; medians are reported [5].
	Reps int
	// ModelKs are the K of the runs with model latency [0 1 4 16].
	ModelKs []int
	// ModelLatency is the latency before each response's first byte in
	// those runs [500ms]; negative skips them.
	ModelLatency time.Duration
	// ModelReps is how many times each of those runs [3].
	ModelReps int
	// Concurrency is BROOD_CONCURRENCY; 0 means max(K, 5), so that every
	// child of a run is live at once.
	Concurrency int
	// Provider is anthropic or openai [anthropic].
	Provider string
	// NoGit makes the project a plain directory; by default it is a git
	// repository, as real projects are (and brood snapshots git state
	// around every child).
	NoGit bool
	// Sample is the interval of the memory sampler; negative disables it
	// [5ms]. It runs in runs of its own, one after each timed run of the
	// series (brood, the floor, the compared command): the memory figures
	// come from those, the wall, CPU and latencies from the timed runs,
	// which nothing reads while they run.
	Sample time.Duration
	// FloorReps is how many times each floor is measured [30].
	FloorReps int
	// Env is added to brood's environment (e.g. GOGC=200 to try a
	// setting before proposing it).
	Env []string
	// Compare is a second command run against the same fake, interleaved
	// with brood run by run (its words; the prompt is appended): another
	// brood build ("/path/brood run --model anthropic/claude-bench") or
	// another agent ("claude -p --model claude-bench"). nil: none.
	Compare []string
	// Warm is BROOD_WARM for brood's runs (settings pool.warm: children
	// started ahead of their tasks). With Warm set and no Compare, the
	// compare command is the same brood run cold (BROOD_WARM=0), so one
	// run measures both, interleaved.
	Warm int
	// SelfChild also runs brood with its children running brood itself
	// (BROOD_CHILD_EXE=Brood: a single-binary install, go run, the demo),
	// interleaved run by run, for issue 29's "only brood installed" row.
	SelfChild bool
	// WriterFiles are the tree sizes of the writer runs (one reader, one
	// in-place writer, one isolated writer on a committed tree of each
	// size); nil skips them. WriterReps is their runs [5].
	WriterFiles []int
	WriterReps  int
	// Trace runs brood with its spawn trace on (BROOD_SPAWNTRACE) and
	// reports each child's spawn latency stage by stage.
	Trace bool
	// Progress, if set, gets one line per run.
	Progress io.Writer
	// Keep leaves every run's records in Dir: each earlier run's
	// .brood/dispatch, sessions and outputs under Dir/trash/N (moved aside
	// as the next run starts), the last run's in Dir/project/.brood.
	Keep bool

	// coldSelf: Compare is brood itself run cold (Warm without Compare);
	// it keeps brood's choice of child binary.
	coldSelf bool
}

func (c *Config) defaults() {
	if c.Ks == nil {
		c.Ks = []int{0, 1, 4, 16, 64, 256}
	}
	if c.Reps <= 0 {
		c.Reps = 5
	}
	if c.ModelKs == nil {
		c.ModelKs = []int{0, 1, 4, 16}
	}
	if c.ModelLatency == 0 {
		c.ModelLatency = 500 * time.Millisecond
	}
	if c.ModelReps <= 0 {
		c.ModelReps = 3
	}
	if c.Provider == "" {
		c.Provider = "anthropic"
	}
	if c.Sample == 0 {
		c.Sample = 5 * time.Millisecond
	}
	if c.FloorReps <= 0 {
		c.FloorReps = 30
	}
	if c.WriterReps <= 0 {
		c.WriterReps = 5
	}
	// The runs start in the project, not here: a program given by a
	// relative path (--brood bin/brood) is made absolute; a bare name is
	// looked up on PATH as before.
	c.Brood, c.Child = absProgram(c.Brood), absProgram(c.Child)
	if len(c.Compare) > 0 {
		c.Compare = append([]string{absProgram(c.Compare[0])}, c.Compare[1:]...)
	}
}

// absProgram is path made absolute when it is relative and holds a
// separator (a bare name, or "", is left as it is).
func absProgram(path string) string {
	if path == "" || filepath.IsAbs(path) || !strings.ContainsRune(path, filepath.Separator) {
		return path
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// Harness holds a fake server, a project and the binaries for a run.
type Harness struct {
	cfg        Config
	dir        string
	fake       *Fake
	proj       *project
	static     string
	floorChild string
	child      string // the binary the children run
	writer     string // the children of the next run write, with this isolation
}

// Report is everything one bench run measured.
type Report struct {
	Config  Config
	Machine Machine
	// Child is the binary the children ran.
	Child string
	Floor Floor
	// Timing has one row per K of the zero-latency runs; Model one per K
	// of the runs with model latency.
	Timing []Row
	Model  []Row
	// CompareTiming and CompareModel are the same rows for Config.Compare.
	CompareTiming []Row
	CompareModel  []Row
	// FloorTiming and FloorModel are the same rows for the floor of a
	// whole run (floorchild -parent K: a bare SDK parent running K bare
	// SDK children), interleaved with brood's runs.
	FloorTiming []Row
	FloorModel  []Row
	// SelfTiming is brood with its children running brood (SelfChild).
	SelfTiming []Row
	// Writers are the writer runs (WriterFiles): per size, the reader,
	// the in-place writer and the isolated writer, in that order.
	Writers []WriterRow
	// Samples are every run, for those who want more than medians: the
	// timed runs and the memory runs (Sample.Sampled) alike.
	Samples []*Sample
}

// Machine describes where the figures come from.
type Machine struct {
	CPUs      int
	Kernel    string
	GoVersion string
	CPUModel  string
}

// Run measures everything Config asks for.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	if cfg.Brood == "" {
		return nil, errors.New("bench: no brood binary given")
	}
	if cfg.Provider != "anthropic" && cfg.Provider != "openai" {
		return nil, fmt.Errorf("bench: provider %q: use anthropic or openai", cfg.Provider)
	}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "brood-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	if cfg.Warm > 0 && len(cfg.Compare) == 0 {
		cfg.Compare, cfg.coldSelf = []string{cfg.Brood, "run", "--model", modelSpec(cfg.Provider)}, true
	}
	h := &Harness{cfg: cfg, dir: dir, floorChild: cfg.FloorChild, child: cfg.Child}
	if h.child == "" {
		h.child = childexe.FindNamed(cfg.Brood, childexe.ForAPI(cfg.Provider)).Path
	}
	var err error
	if h.fake, err = NewFake(); err != nil {
		return nil, err
	}
	defer h.fake.Close()
	if h.proj, err = newProject(dir, !cfg.NoGit); err != nil {
		return nil, err
	}
	if !cfg.Keep {
		defer os.RemoveAll(h.proj.trash) // earlier runs' records, deleted once nothing is measured
	}
	if h.static, err = BuildStatic(ctx, dir); err != nil {
		return nil, err
	}
	rep := &Report{Config: cfg, Machine: machine(), Child: h.child}
	h.progress("floor: exec, loopback HTTP, SDK child")
	if rep.Floor, err = h.measureFloor(ctx, cfg.FloorReps); err != nil {
		return nil, err
	}
	// One untimed run warms the page cache for the binary and git.
	if _, err := h.runOnce(ctx, 1, 5, 0, false); err != nil {
		return nil, err
	}
	rep.Timing, rep.CompareTiming, rep.FloorTiming, rep.SelfTiming, err = h.series(ctx, rep, cfg.Ks, cfg.Reps, 0)
	if err != nil {
		return nil, err
	}
	if cfg.ModelLatency > 0 {
		if rep.Model, rep.CompareModel, rep.FloorModel, _, err = h.series(ctx, rep, cfg.ModelKs, cfg.ModelReps, cfg.ModelLatency); err != nil {
			return nil, err
		}
	}
	if len(cfg.WriterFiles) > 0 {
		if rep.Writers, err = h.writers(ctx, cfg.WriterFiles, cfg.WriterReps); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// series runs every K reps times, interleaving the Ks (K0 K1 K4 … K0 K1 …)
// so that a burst of load from other work on the machine spreads over all
// of them instead of skewing one.
// With a --compare command, each run of brood is followed by one of it,
// and with the floor child built, by one of the floor run. With the memory
// sampler on, each K's timed runs are followed by as many sampled ones
// (brood, the floor, the compared command), kept for their memory alone.
func (h *Harness) series(ctx context.Context, rep *Report, ks []int, reps int, latency time.Duration) (rows, cmp, floor, self []Row, err error) {
	by := kindSamples{brood: map[int][]*Sample{}, cmp: map[int][]*Sample{}, floor: map[int][]*Sample{}, self: map[int][]*Sample{}}
	passes := []bool{false}
	if h.cfg.Sample > 0 {
		passes = append(passes, true)
	}
	for r := range reps {
		for _, k := range ks {
			for _, sampled := range passes {
				if err := h.round(ctx, rep, &by, fmt.Sprintf("rep %d/%d", r+1, reps), k, latency, sampled); err != nil {
					return nil, nil, nil, nil, err
				}
			}
		}
	}
	rows = rowsOf(ks, by.brood, latency)
	if len(h.cfg.Compare) > 0 {
		cmp = rowsOf(ks, by.cmp, latency)
	}
	if h.floorChild != "" {
		floor = rowsOf(ks, by.floor, latency)
	}
	if len(by.self) > 0 {
		self = rowsOf(ks, by.self, latency)
	}
	return rows, cmp, floor, self, nil
}

// kindSamples are a series' runs by K: brood's, the compared command's,
// the floor's and brood's with children re-running it.
type kindSamples struct {
	brood, cmp, floor, self map[int][]*Sample
}

// round runs brood once at K=k, then the floor, the self-child run
// (timed rounds only: no memory figure is read from it) and the compared
// command, each once, sampled or not.
func (h *Harness) round(ctx context.Context, rep *Report, by *kindSamples, tag string, k int, latency time.Duration, sampled bool) error {
	conc := h.cfg.Concurrency
	if conc <= 0 {
		conc = max(k, 5)
	}
	if sampled {
		tag += " memory run"
	}
	s, err := h.runOnce(ctx, k, conc, latency, sampled)
	if err != nil {
		return err
	}
	by.brood[k] = append(by.brood[k], s)
	rep.Samples = append(rep.Samples, s)
	h.progress(fmt.Sprintf("%s K=%d latency=%s: %s children %d", tag, k, latency, figures(s), s.Children))
	if h.floorChild != "" {
		f, err := h.runFloor(ctx, k, conc, latency, sampled)
		if err != nil {
			return err
		}
		by.floor[k] = append(by.floor[k], f)
	}
	if h.cfg.SelfChild && latency == 0 && !sampled {
		env := append(slices.DeleteFunc(h.env(conc), func(e string) bool { return strings.HasPrefix(e, "BROOD_CHILD_EXE=") }), "BROOD_CHILD_EXE="+h.cfg.Brood)
		s, err := h.runCmd(ctx, []string{h.cfg.Brood, "run", "--model", h.modelSpec()}, env, k, conc, latency, false)
		if err != nil {
			return err
		}
		by.self[k] = append(by.self[k], s)
	}
	if len(h.cfg.Compare) == 0 {
		return nil
	}
	c, err := h.runCompare(ctx, k, conc, latency, sampled)
	if err != nil {
		return err
	}
	by.cmp[k] = append(by.cmp[k], c)
	h.progress(fmt.Sprintf("%s K=%d latency=%s compare: %s child requests %d", tag, k, latency, figures(c), c.ChildRequests))
	return nil
}

// figures is what a run's progress line shows: a timed run's wall and
// CPU, a sampled run's memory.
func figures(s *Sample) string {
	if s.Sampled {
		return fmt.Sprintf("pss %.1f MiB, %d processes seen", mib(s.Mem.PeakPSSKB), s.Mem.Seen)
	}
	return fmt.Sprintf("wall %s cpu %s", ms(s.Wall), ms(s.CPU))
}

func rowsOf(ks []int, byK map[int][]*Sample, latency time.Duration) []Row {
	var rows []Row
	for _, k := range ks {
		rows = append(rows, summarize(byK[k], latency))
	}
	base := rows[0]
	for i := range rows {
		rows[i].marginal(base)
		if base.K == 0 {
			rows[i].Split.marginal(rows[i].K, base.Split)
		}
	}
	return rows
}

func (h *Harness) progress(line string) {
	if h.cfg.Progress != nil {
		fmt.Fprintln(h.cfg.Progress, "bench:", line)
	}
}

func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(l, "model name"); ok {
				m.CPUModel = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	return m
}

// FindModule returns the nearest ancestor of dir holding go.mod.
func FindModule(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod above %s: run from brood's source tree", dir)
		}
		d = parent
	}
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianInt(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
