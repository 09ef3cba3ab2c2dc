// Package bench is `brood bench`: the delegation benchmark of package
// bench behind a command line. It holds flags and wiring only.
package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	benchmark "github.com/broodhq/brood/internal/bench"
	"github.com/broodhq/brood/internal/childexe"
	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// Options are the flags of `brood bench`.
type Options struct {
	brood        string
	child        string
	build        bool
	src          string
	ks           string
	reps         int
	modelKs      string
	modelLatency time.Duration
	modelReps    int
	concurrency  int
	provider     string
	noGit        bool
	sample       time.Duration
	floorReps    int
	env          []string
	out          string
	compare      string
	quiet        bool
	keep         bool
	warm         int
	trace        bool
	selfChild    bool
	writers      string
	writerReps   int
}

// NewCmdBench builds `brood bench`. f may be nil (the command reads no
// settings); runF replaces the measurement.
func NewCmdBench(_ *cmdutil.Factory, runF func(*cobra.Command, *Options) error) *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure what delegation costs: wall, CPU, memory and spawn latency per subagent",
		Long: `Run brood against a loopback fake model that scripts a parent asking for K
explore subagents at once (each reads one file and answers in about 200 tokens),
for several K, and report medians: wall time, CPU of the whole process tree,
summed PSS and RSS of the live tree, processes spawned, marginal cost per
subagent, spawn latency, and with model latency on, total time against the
model time. The floor (exec of a static Go binary, a loopback HTTP round trip,
a bare Go SDK child, and a bare SDK parent running K bare SDK children, run
by run beside brood) is measured in the same run and every figure is shown
against it, in issue 29's table with its targets. --trace breaks each
child's spawn latency into the parent's and the child's stages; --writers
times a reader against in-place and isolated writers on large trees.
Needs the Go toolchain for the floor binaries, and brood's source tree for
the SDK floor and issue 29's table (run it inside the tree or pass --src
DIR; without it they are skipped, and it says so). Walls, CPU and spawn
latencies come from runs nothing samples; memory (PSS, private memory)
from as many runs again with the --sample reader on.`,
		Example: `  brood bench
  brood bench --ks 0,1,4,16 --reps 3 --model-latency -1s
  brood bench --env GOGC=200 --out /tmp/gogc200.md
  brood bench --ks 0,16 --compare "claude -p --model claude-bench"
  brood bench --ks 0,1,16 --warm 4
  brood bench --ks 0,1,16 --trace --self-child --writers 10000,40000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd, &o)
			}
			return benchRun(cmd, &o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.brood, "brood", "", "brood binary to measure (default: this binary, or a fresh build with --build)")
	fl.StringVar(&o.child, "child", "", "binary the children run (default: what brood picks: brood-child, or brood-child-openai with --provider openai, beside it when it is the same build, else brood)")
	fl.BoolVar(&o.build, "build", false, "build ./cmd/brood and the lean child binary (./cmd/brood-child, or ./cmd/brood-child-openai with --provider openai) from --src and measure them")
	fl.StringVar(&o.src, "src", "", "brood's source tree, for --build, the SDK floor and issue 29's table (default: the working directory's, if it is in brood's; without one they are skipped)")
	fl.StringVar(&o.ks, "ks", "0,1,4,16,64,256", "subagent counts K of the zero-latency runs")
	fl.IntVar(&o.reps, "reps", 5, "runs per K (medians are reported)")
	fl.StringVar(&o.modelKs, "model-ks", "0,1,4,16", "K of the runs with model latency")
	fl.DurationVar(&o.modelLatency, "model-latency", 500*time.Millisecond, "latency before each response's first byte in the model runs (negative: skip them)")
	fl.IntVar(&o.modelReps, "model-reps", 3, "runs per K with model latency")
	fl.IntVar(&o.concurrency, "concurrency", 0, "BROOD_CONCURRENCY (default max(K, 5): every child live at once)")
	fl.StringVar(&o.provider, "provider", "anthropic", "wire format of the fake: anthropic or openai")
	fl.BoolVar(&o.noGit, "no-git", false, "make the project a plain directory instead of a git repository")
	fl.DurationVar(&o.sample, "sample", 5*time.Millisecond, "memory sampling interval of the memory runs, one after each timed run (negative: off, no memory figures)")
	fl.IntVar(&o.floorReps, "floor-reps", 30, "runs of each floor measurement")
	cmdutil.StringArrayVar(fl, &o.env, "env", nil, "KEY=VALUE added to brood's environment (repeatable), e.g. GOGC=200")
	fl.StringVar(&o.out, "out", "", "also write the markdown report to this file")
	fl.StringVar(&o.compare, "compare", "", "a second command run against the same fake, interleaved with brood (words split on spaces; the prompt is appended), e.g. \"claude -p --model claude-bench\" or \"/old/brood run --model anthropic/claude-bench\"")
	fl.BoolVar(&o.quiet, "quiet", false, "no progress lines on stderr")
	fl.IntVar(&o.warm, "warm", 0, "BROOD_WARM (pool.warm) for brood's runs; without --compare, the same brood also runs cold (BROOD_WARM=0), interleaved, and the report compares them")
	fl.BoolVar(&o.trace, "trace", false, "trace each child's spawn (BROOD_SPAWNTRACE) and break its latency into stages, parent's and child's")
	fl.BoolVar(&o.selfChild, "self-child", false, "also run brood with its children running brood itself (BROOD_CHILD_EXE: a single-binary install), interleaved, for the \"only brood installed\" row")
	fl.StringVar(&o.writers, "writers", "", "tree sizes (files) of the writer runs: a reader, an in-place writer and an isolated writer, one child each, interleaved (e.g. 10000,40000; default none)")
	fl.IntVar(&o.writerReps, "writer-reps", 5, "runs of each writer kind per tree size")
	fl.BoolVar(&o.keep, "keep", false, "keep the temporary directory: every run's .brood/dispatch records (a child's stderr.log when it wrote there, e.g. with --env GODEBUG=inittrace=1), the earlier runs' under DIR/trash/N, the last run's under DIR/project/.brood")
	return cmd
}

func benchRun(cmd *cobra.Command, o *Options) error {
	ctx := cmd.Context()
	ks, modelKs, writers, err := o.counts()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "brood-bench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintf(cmd.ErrOrStderr(), "bench: keeping %s (each run's records: %s/trash/N/dispatch, the last run's %s/project/.brood/dispatch)\n", dir, dir, dir)
	} else {
		defer os.RemoveAll(dir)
	}
	wd, _ := os.Getwd()
	src, missing := source(o.src, wd)
	if missing != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "bench:", missing)
	}
	brood := o.brood
	switch {
	case brood != "":
	case o.build:
		if src == "" {
			return fmt.Errorf("--build: %s", missing)
		}
		brood = filepath.Join(dir, "brood")
		if err := benchmark.BuildPackage(ctx, src, "./cmd/brood", brood); err != nil {
			return err
		}
		if o.child == "" {
			// The lean binary of the fake's wire API (cmd/brood-child or
			// cmd/brood-child-openai), as brood would pick it.
			name := childexe.ForAPI(o.provider)
			o.child = filepath.Join(dir, name)
			if err := benchmark.BuildPackage(ctx, src, "./cmd/"+name, o.child); err != nil {
				return err
			}
		}
	default:
		if brood, err = os.Executable(); err != nil {
			return err
		}
	}
	cfg := benchmark.Config{
		WriterFiles: writers, WriterReps: o.writerReps,
		Brood: brood, Child: o.child, Dir: dir, Ks: ks, Reps: o.reps, ModelKs: modelKs, ModelLatency: o.modelLatency,
		ModelReps: o.modelReps, Concurrency: o.concurrency, Provider: o.provider, NoGit: o.noGit,
		Sample: o.sample, FloorReps: o.floorReps, Keep: o.keep, Env: o.env, Compare: strings.Fields(o.compare), Warm: o.warm, Trace: o.trace, SelfChild: o.selfChild,
	}
	if !o.quiet {
		cfg.Progress = cmd.ErrOrStderr()
	}
	if src != "" {
		fc := filepath.Join(dir, "floorchild")
		if err := benchmark.BuildPackage(ctx, src, "./internal/bench/floorchild", fc); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "bench: the SDK floor and issue 29's table are skipped: the floor child does not build from %s (--src DIR): %v\n", src, err)
		} else {
			cfg.FloorChild = fc
		}
	}
	rep, err := benchmark.Run(ctx, cfg)
	if err != nil {
		return err
	}
	var b strings.Builder
	rep.Markdown(&b)
	fmt.Fprint(cmd.OutOrStdout(), b.String())
	if o.out != "" {
		return os.WriteFile(o.out, []byte(b.String()), 0o644)
	}
	return nil
}

// broodModule is the module path of brood's source tree.
const broodModule = "github.com/broodhq/brood"

// source is brood's source tree for the floor and --build: --src, else
// the module above wd when it is brood's. missing says, when there is
// none, what is skipped and how to give one.
func source(flagSrc, wd string) (src, missing string) {
	if flagSrc != "" {
		return flagSrc, ""
	}
	const skipped = "the SDK floor and issue 29's table are skipped (pass --src DIR, DIR brood's source tree)"
	mod, err := benchmark.FindModule(wd)
	if err != nil {
		return "", fmt.Sprintf("no go.mod above %s: %s", wd, skipped)
	}
	b, err := os.ReadFile(filepath.Join(mod, "go.mod"))
	if err != nil {
		return "", fmt.Sprintf("%s: %v: %s", filepath.Join(mod, "go.mod"), err, skipped)
	}
	if path := modulePath(b); path != broodModule {
		return "", fmt.Sprintf("%s is module %q, not brood's source tree: %s", mod, path, skipped)
	}
	return mod, ""
}

// modulePath is the module line of a go.mod ("" without one).
func modulePath(gomod []byte) string {
	for _, l := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

func parseKs(s string) ([]int, error) {
	var ks []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		k, err := strconv.Atoi(f)
		if err != nil || k < 0 {
			return nil, fmt.Errorf("%q is not a subagent count", f)
		}
		ks = append(ks, k)
	}
	if len(ks) == 0 {
		return nil, fmt.Errorf("no K given")
	}
	if ks[0] != 0 {
		// Marginal costs are measured against K=0.
		ks = append([]int{0}, ks...)
	}
	return ks, nil
}

// counts are --ks, --model-ks and --writers, parsed.
func (o *Options) counts() (ks, modelKs, writers []int, err error) {
	if ks, err = parseKs(o.ks); err != nil {
		return nil, nil, nil, fmt.Errorf("--ks: %w", err)
	}
	if modelKs, err = parseKs(o.modelKs); err != nil {
		return nil, nil, nil, fmt.Errorf("--model-ks: %w", err)
	}
	if o.writers != "" {
		if writers, err = parseSizes(o.writers); err != nil {
			return nil, nil, nil, fmt.Errorf("--writers: %w", err)
		}
	}
	return ks, modelKs, writers, nil
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a number of files", f)
		}
		out = append(out, n)
	}
	return out, nil
}
