package temporal_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/local"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/spawntrace"
	"github.com/broodhq/brood/internal/workflow"
)

// BenchmarkTemporalVsLocal runs one plan of K=40 calls (BROOD_BENCH_K is
// not read: the fleet run is the slow one) through the local engine,
// through the Temporal engine (a real dev server, one in-process worker
// over its own repository) and through the Temporal engine shipping the
// submitter's tree (a 1,000-file repository with a dirty edit: one capture
// per run, a fresh copy per call on the worker), 4 at a time, with the
// same real children: the differences per agent are what the fleet costs
// (a workflow task and an activity task per call, heartbeats, the store)
// and what the code on workers adds: once with copies as `brood worker`
// makes them (overlays over a cached checkout of the base, where the
// machine allows them), once with a full checkout per call (the fallback,
// and what every copy cost before overlays).
//
//	go test ./internal/engine/temporal -run XXX -bench TemporalVsLocal -benchtime 1x
func BenchmarkTemporalVsLocal(b *testing.B) {
	const k, conc = 40, 4
	items := make([]string, k)
	for j := range items {
		items[j] = fmt.Sprintf("%q", fmt.Sprint("item-", j))
	}
	p, err := workflow.Parse("bench.yaml", []byte("name: bench\nconcurrency: 4\ninputs:\n  items: {type: list}\nphases:\n  - id: e\n    each: inputs.items[*]\n    stages: [{agent: explore, prompt: \"item {{item}}\"}]\n"))
	if err != nil {
		b.Fatal(err)
	}
	in, _ := workflow.ResolveInputs(p, map[string]string{"items": "[" + strings.Join(items, ",") + "]"})
	run := func(eng engine.Engine) time.Duration {
		start := time.Now()
		res, err := eng.Run(b.Context(), engine.RunRequest{Plan: p, Source: "bench.yaml", Inputs: in})
		if err != nil || res.Status != workflow.RunDone || res.Agents != k {
			b.Fatalf("run: %v %+v", err, res)
		}
		return time.Since(start)
	}
	for i := 0; i < b.N; i++ {
		lp := newProject(b, enginetest.Script)
		loc := local.New(local.Config{ProjectRoot: lp.root, Runner: lp.dispatcher(b, conc), Concurrency: conc})
		srv := sharedServer(b)
		c := srv.Client(b)
		q := newQueue(b)
		startWorker(b, c, q, enginetest.Script, conc, &temporal.DirStore{Dir: b.TempDir()})
		tmp := newEngine(c, q)
		repo := benchRepo(b, 1000)
		withCode := func(full bool) engine.Engine {
			q, store := newQueue(b), "file://"+b.TempDir()
			startCodeWorker(b, c, q, enginetest.Script, conc, store, full)
			blobs, _ := blobstore.Open(b.Context(), store)
			return temporal.New(temporal.Config{Client: c, Queue: q, Poll: 50 * time.Millisecond,
				Limits: func(string) temporal.CallLimits { return testLimits },
				Code:   &temporal.CodeConfig{Blobs: blobs, Dir: repo}})
		}
		lw := run(loc)
		tw := run(tmp)
		cw := run(withCode(false))
		fw := run(withCode(true))
		per := float64(tw-lw) / float64(k) / 1e6
		code := float64(cw-tw) / float64(k) / 1e6
		full := float64(fw-tw) / float64(k) / 1e6
		b.ReportMetric(lw.Seconds(), "local-s")
		b.ReportMetric(tw.Seconds(), "temporal-s")
		b.ReportMetric(cw.Seconds(), "temporal-code-s")
		b.ReportMetric(fw.Seconds(), "temporal-fullcopy-s")
		b.ReportMetric(per, "overhead-wall-ms/agent")
		b.ReportMetric(float64(tw-lw)*conc/float64(k)/1e6, "overhead-slot-ms/agent")
		b.ReportMetric(code, "code-wall-ms/agent")
		b.ReportMetric(full, "fullcopy-wall-ms/agent")
		b.Logf("K=%d concurrency=%d: local engine %s, Temporal engine %s (%.1f ms of wall per agent more, %.0f ms per slot), with the submitter's tree shipped %s (%.1f ms per agent more; overlay copies: %v), with a full copy per call %s (%.1f ms per agent more)",
			k, conc, lw.Round(time.Millisecond), tw.Round(time.Millisecond), per, float64(tw-lw)*conc/float64(k)/1e6,
			cw.Round(time.Millisecond), code, overlayHere(b), fw.Round(time.Millisecond), full)
	}
}

// overlayHere reports whether a code worker makes overlay copies here.
func overlayHere(t testing.TB) bool { return isolate.ProbeIn(t.Context(), t.TempDir()).Overlay }

// startCodeWorker is startWorker with the code site: calls that carry the
// submitter's tree run in a fresh copy of it from a clone cache of its own
// (an overlay where the machine has one, unless full).
func startCodeWorker(t testing.TB, c client.Client, queue, script string, conc int, store string, full bool) *project {
	t.Helper()
	return startCodeWorkerIn(t, c, queue, script, conc, store, full, &codesnap.Cache{Dir: t.TempDir()}, nil, testRates, workerSigning{})
}

// workerSigning is a worker's side of a signed fleet (zero: unsigned).
type workerSigning struct {
	trust *temporal.Trust // the submitters it runs calls of
	keys  *temporal.WorkerKeys
}

// benchKeys are a signed fleet's keys, as users run one: the submitter
// signs every submission, each worker runs only what that key signed and
// signs its results and heartbeats with a key of its own, the workers
// continue each other's calls, and the submitter takes the results of
// theirs only.
type benchKeys struct {
	submitter *temporal.Signer
	admit     *temporal.Trust // the workers' allowlist: the submitter
	peers     *temporal.Trust // the workers' keys
	workers   []*temporal.Signer
}

// newBenchKeys makes a submitter's key and n workers'.
func newBenchKeys(t testing.TB, n int) *benchKeys {
	t.Helper()
	key := func() (*temporal.Signer, string) {
		dir := filepath.Join(t.TempDir(), "fleet")
		line, err := temporal.GenerateKey(dir, "bench", false)
		if err != nil {
			t.Fatal(err)
		}
		s, err := temporal.LoadSigner(filepath.Join(dir, temporal.PrivateKeyFile))
		if err != nil || s == nil {
			t.Fatalf("load a bench key: %v", err)
		}
		return s, line
	}
	k := &benchKeys{admit: temporal.NewTrust(), peers: temporal.NewTrust()}
	var pub string
	k.submitter, pub = key()
	if err := k.admit.Add(pub, "bench"); err != nil {
		t.Fatal(err)
	}
	for range n {
		w, pub := key()
		if err := k.peers.Add(pub, "bench"); err != nil {
			t.Fatal(err)
		}
		k.workers = append(k.workers, w)
	}
	return k
}

// worker is worker i's side.
func (k *benchKeys) worker(i int) workerSigning {
	if k == nil {
		return workerSigning{}
	}
	return workerSigning{trust: k.admit, keys: temporal.NewWorkerKeys(k.workers[i], k.peers)}
}

// startCodeWorkerIn is startCodeWorker with a given clone cache (workers of
// one user on one host share theirs) and rates.
func startCodeWorkerIn(t testing.TB, c client.Client, queue, script string, conc int, store string, full bool, cache *codesnap.Cache, times *temporal.CallTimes, r rates, sig workerSigning) *project {
	t.Helper()
	p := newProject(t, script)
	blobs, err := blobstore.Open(t.Context(), store)
	if err != nil {
		t.Fatal(err)
	}
	d := p.dispatcherAt(t, conc, r)
	if !full {
		// As `brood worker` does: overlays where this machine has them.
		sup := isolate.ProbeIn(t.Context(), cache.Dir)
		cache.Overlay, cache.UserXattr = sup.Overlay, sup.UserXattr
	}
	reg, _ := registry.Load(registry.Options{ProjectRoot: p.root, Home: p.home})
	site := &temporal.CodeSite{Cache: cache, Blobs: blobs,
		RunnerIn: func(co *codesnap.Checkout) (call.Runner, error) { return d.In(co.Dir, co.Root, co.Mount) },
		ReadOnly: func(a string) bool { def, ok := reg.Get(a); return ok && def.ReadOnly }}
	w := temporal.NewWorker(c, temporal.WorkerOptions{
		Queue: queue, Concurrency: conc, Heartbeat: r.heartbeat, StopTimeout: 5 * time.Second, Eager: os.Getenv("BROOD_BENCH_EAGER") != "",
		Activities: &temporal.Activities{Runner: d, ProjectRoot: p.root, Store: blobs, Worker: "test-" + filepath.Base(p.root),
			UploadEvery: r.upload, Code: site, Times: times, Trust: sig.trust, Keys: sig.keys},
	})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return p
}

// benchRepo is a committed repository of n files with one dirty edit.
func benchRepo(t testing.TB, n int) string {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q")
	benchFill(t, dir, n)
	return dir
}

// benchFill commits n files in the repository at dir and edits one.
func benchFill(t testing.TB, dir string, n int) {
	t.Helper()
	for i := range n {
		f := filepath.Join(dir, fmt.Sprint("d", i/100), fmt.Sprint("f", i%100, ".txt"))
		os.MkdirAll(filepath.Dir(f), 0o755)
		os.WriteFile(f, fmt.Appendf(nil, "file %d\n", i), 0o644)
	}
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base")
	os.WriteFile(filepath.Join(dir, "d0", "f0.txt"), []byte("dirty\n"), 0o644)
}

// fleetScript answers every call in one model turn, after latency.
func fleetScript(latency time.Duration) string {
	delay := ""
	if latency > 0 {
		delay = fmt.Sprintf("\n      delay: %s", latency)
	}
	return "agents:\n  explore:\n    - say: \"plain answer\"" + delay + "\n"
}

// envInt is an integer from the environment, or def.
func envInt(name string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err == nil && n > 0 {
		return n
	}
	return def
}

// eachPlan is a plan of k explore calls, conc at a time.
func eachPlan(t testing.TB, k, conc int) (*workflow.Plan, map[string]any) {
	t.Helper()
	items := make([]string, k)
	for j := range items {
		items[j] = fmt.Sprintf("%q", fmt.Sprint("item-", j))
	}
	p, err := workflow.Parse("bench.yaml", fmt.Appendf(nil, "name: bench\nconcurrency: %d\nmax_agents: %d\ninputs:\n  items: {type: list}\nphases:\n  - id: e\n    each: inputs.items[*]\n    stages: [{agent: explore, prompt: \"item {{item}}\"}]\n", conc, k))
	if err != nil {
		t.Fatal(err)
	}
	in, err := workflow.ResolveInputs(p, map[string]string{"items": "[" + strings.Join(items, ",") + "]"})
	if err != nil {
		t.Fatal(err)
	}
	return p, in
}

// timedRun runs a plan and returns its wall time.
func timedRun(t testing.TB, eng engine.Engine, p *workflow.Plan, in map[string]any, k int) time.Duration {
	d, _ := timedRunID(t, eng, p, in, k)
	return d
}

// timedRunID is timedRun, with the run's id; BROOD_BENCH_PROGRESS=1 asks
// for the run's progress as the CLI does.
func timedRunID(t testing.TB, eng engine.Engine, p *workflow.Plan, in map[string]any, k int) (time.Duration, string) {
	t.Helper()
	req := engine.RunRequest{Plan: p, Source: "bench.yaml", Inputs: in}
	if os.Getenv("BROOD_BENCH_PROGRESS") != "" {
		// As the CLI runs a plan: its progress asked for every Poll (the
		// Temporal engine's query and description), and dropped here.
		req.Events = func(workflow.Event) {}
	}
	start := time.Now()
	res, err := eng.Run(t.Context(), req)
	if err != nil || res.Status != workflow.RunDone || res.Agents != k {
		t.Fatalf("run: %v %+v", err, res)
	}
	return time.Since(start), res.RunID
}

// fleetOf starts n in-process code workers of conc slots each on a new
// queue, at the rates `brood worker` runs with by default (benchRates),
// and returns an engine that ships dir's tree to them; shared: the
// workers share one clone cache (as workers of one user on one host do),
// else each has its own (as on n hosts). The fleet is signed as brood's
// is (benchKeys; BROOD_BENCH_UNSIGNED=1: unsigned, as the benchmarks ran
// before 2026-12-06 10:00 UTC).
func fleetOf(t testing.TB, c client.Client, script, dir string, n, conc int, shared bool, times *temporal.CallTimes) (engine.Engine, []string) {
	t.Helper()
	q, store := newQueue(t), "file://"+t.TempDir()
	cache := &codesnap.Cache{Dir: t.TempDir()}
	var keys *benchKeys
	if os.Getenv("BROOD_BENCH_UNSIGNED") == "" {
		keys = newBenchKeys(t, n)
	}
	var roots []string // the workers' projects, where their children's tasks are
	for i := range n {
		if !shared {
			cache = &codesnap.Cache{Dir: t.TempDir()}
		}
		roots = append(roots, startCodeWorkerIn(t, c, q, script, conc, store, false, cache, times, benchRates(), keys.worker(i)).root)
	}
	blobs, err := blobstore.Open(t.Context(), store)
	if err != nil {
		t.Fatal(err)
	}
	cfg := temporal.Config{Client: c, Queue: q, Limits: func(string) temporal.CallLimits { return benchRates().limits() }}
	if keys != nil {
		// As brood's submitter does: the submission signed and put in
		// the store once, the workers' results taken by their keys.
		cfg.Signer, cfg.Store, cfg.Workers = keys.submitter, blobs, temporal.NewResultTrust(keys.peers, "bench")
	}
	code := &temporal.CodeConfig{Blobs: blobs, Dir: dir}
	if dir == "" {
		code = nil // the workers' own checkouts
	}
	// The progress's rate: the CLI's, or BROOD_BENCH_POLL's (with
	// BROOD_BENCH_PROGRESS=1: what asking for it costs).
	poll, err := time.ParseDuration(os.Getenv("BROOD_BENCH_POLL"))
	if err != nil {
		poll = 250 * time.Millisecond
	}
	cfg.Poll, cfg.Code = poll, code
	return temporal.New(cfg), roots
}

// benchRates are the benchmarks' rates: what users run (userRates), or
// the tests' with BROOD_BENCH_TEST_RATES=1 (a 100 ms ping, a worker
// heartbeat every 200 ms: figures from before 2026-12-05 12:00 UTC).
func benchRates() rates {
	if os.Getenv("BROOD_BENCH_TEST_RATES") != "" {
		return testRates
	}
	return userRates()
}

// BenchmarkFleetOverhead is issue 26's per-agent figure: one plan of
// BROOD_BENCH_CALLS (300) read-only calls through the local engine (12 at
// a time, in a 1,000-file repository with a dirty edit) and through three
// workers of 4 slots each shipping the submitter's tree (the same files;
// BROOD_BENCH_NOCODE=1: the workers' own checkouts), with a model that
// answers at once and one that takes 300 ms. Per agent is the run's wall
// time over its calls. The fleet runs twice: on new workers (cold: each
// worker's first call fetches the base and checks it out and verifies it)
// and again on the same workers (warm: a team's next plan); the local
// engine runs before and after them (the machine's load drifts), and the
// ratios are against the mean of its two runs. Each fleet run's calls are
// timed from its workflow's history (timeline_test.go), and each run's
// CPU per call is logged: the dev server's, this process's (the
// workers, the submitter, the local engine) and the children's. Workers
// and children run at `brood worker`'s default rates (benchRates).
//
//	go test ./internal/engine/temporal -run XXX -bench FleetOverhead -benchtime 1x
func BenchmarkFleetOverhead(b *testing.B) {
	k := envInt("BROOD_BENCH_CALLS", 300)
	const workers, slots = 3, 4
	p, in := eachPlan(b, k, workers*slots)
	srv := sharedServer(b)
	c := srv.Client(b)
	repo := benchRepo(b, 1000)
	if os.Getenv("BROOD_BENCH_NOCODE") != "" {
		repo = ""
	}
	var times *temporal.CallTimes
	if os.Getenv("BROOD_BENCH_BREAKDOWN") != "" {
		// The workers' activities timed stage by stage into the file it
		// names, the spawns traced (the local engine's too, so both pay
		// the same).
		times = &temporal.CallTimes{}
		b.Setenv(spawntrace.EnvVar, "1")
		// The workers' RPCs timed too, and their side of each task.
		c = timedClient(b, srv.Addr, times)
	}
	for i := 0; i < b.N; i++ {
		for _, latency := range []time.Duration{0, 300 * time.Millisecond} {
			script := fleetScript(latency)
			lp := newProject(b, script)
			benchFill(b, lp.root, 1000) // the same tree as the fleet's
			loc := local.New(local.Config{ProjectRoot: lp.root, Runner: lp.dispatcherAt(b, workers*slots, benchRates()), Concurrency: workers * slots})
			fleet, roots := fleetOf(b, c, script, repo, workers, slots, false, times)
			// The children's own CPU, apart from the other programs
			// this process waits for (the submitter's capture's git).
			lled, fled := newChildLedger(lp.root), newChildLedger(roots...)
			// Each run's CPU per call: the server's, the workers' (this
			// process), the children's.
			cpu := make([]string, 4)
			at := cpuNow(srv.Pid())
			l1 := timedRun(b, loc, p, in, k)
			own, n := lled.take()
			cpu[0], at = at.perCallOwn(srv.Pid(), k, own, n), cpuNow(srv.Pid())
			cold, coldID := timedRunID(b, fleet, p, in, k)
			own, n = fled.take()
			cpu[1], at = at.perCallOwn(srv.Pid(), k, own, n), cpuNow(srv.Pid())
			coldTimes := times.Take()
			at = cpuNow(srv.Pid())
			stopProfile := profileWarm(b, latency)
			warm, warmID := timedRunID(b, fleet, p, in, k)
			stopProfile()
			own, n = fled.take()
			cpu[2], at = at.perCallOwn(srv.Pid(), k, own, n), cpuNow(srv.Pid())
			warmTimes := times.Take()
			at = cpuNow(srv.Pid())
			l2 := timedRun(b, loc, p, in, k)
			own, n = lled.take()
			cpu[3] = at.perCallOwn(srv.Pid(), k, own, n)
			local := &temporal.CallTimes{}
			if times != nil {
				local.AddSpawns(lp.root) // both local runs' children
			}
			per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(k) }
			lper := (per(l1) + per(l2)) / 2
			name := fmt.Sprintf("%dms", latency.Milliseconds())
			b.ReportMetric(lper, "local-ms/agent@"+name)
			b.ReportMetric(per(cold), "fleet-cold-ms/agent@"+name)
			b.ReportMetric(per(warm), "fleet-warm-ms/agent@"+name)
			b.ReportMetric(per(cold)/lper, "cold/local@"+name)
			b.ReportMetric(per(warm)/lper, "warm/local@"+name)
			b.Logf("%d calls, model %s: local engine %s and %s (%.1f ms/agent), fleet of %d workers x %d: cold %s (%.1f ms/agent, %.2fx), warm %s (%.1f ms/agent, %.2fx)",
				k, name, l1.Round(time.Millisecond), l2.Round(time.Millisecond), lper, workers, slots,
				cold.Round(time.Millisecond), per(cold), per(cold)/lper, warm.Round(time.Millisecond), per(warm), per(warm)/lper)
			b.Logf("  cold fleet's calls: %s", planTimeline(b, c, coldID))
			b.Logf("  warm fleet's calls: %s", planTimeline(b, c, warmID))
			b.Logf("  %s: local %s; cold %s; warm %s; local again %s", name, cpu[0], cpu[1], cpu[2], cpu[3])
			if times != nil {
				// A file: a benchmark's log keeps its first 10 lines.
				f, err := os.OpenFile(os.Getenv("BROOD_BENCH_BREAKDOWN"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
				if err != nil {
					b.Fatal(err)
				}
				fmt.Fprintf(f, "%d calls, model %s: local %.1f ms/agent, cold %.1f, warm %.1f\n  %s\n  cold fleet's activities:%s\n  warm fleet's activities:%s\n  local engine's children (both runs):%s\n",
					k, name, lper, per(cold), per(warm), strings.Join(cpu, "\n  "), coldTimes, warmTimes, local)
				f.Close()
			}
		}
	}
}

// profileWarm starts a CPU profile of this process (the workers and the
// submitter) into BROOD_BENCH_CPUPROFILE for the warm fleet's run at 300
// ms (the figure issue 26 measures) and returns what stops it; without
// the variable, or at another latency, it does nothing.
func profileWarm(b *testing.B, latency time.Duration) func() {
	name := os.Getenv("BROOD_BENCH_CPUPROFILE")
	if name == "" || latency != 300*time.Millisecond {
		return func() {}
	}
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatalf("BROOD_BENCH_CPUPROFILE: %v (a -cpuprofile of the whole benchmark cannot run with it)", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// dirtyBenchRepo is a committed repository of n files; with dirty, m of
// them modified and u untracked files of size bytes each added.
func dirtyBenchRepo(t testing.TB, n int, dirty bool, m, u, size int) string {
	t.Helper()
	dir := benchRepo(t, n)
	gitT(t, dir, "checkout", "-q", "--", ".")
	if !dirty {
		return dir
	}
	pad := strings.Repeat("x", size)
	for i := range m {
		f := filepath.Join(dir, fmt.Sprint("d", i/100), fmt.Sprint("f", i%100, ".txt"))
		os.WriteFile(f, fmt.Appendf(nil, "modified %d\n%s\n", i, pad), 0o644)
	}
	for i := range u {
		f := filepath.Join(dir, "new", fmt.Sprint("u", i/500), fmt.Sprint("n", i, ".txt"))
		os.MkdirAll(filepath.Dir(f), 0o755)
		os.WriteFile(f, fmt.Appendf(nil, "untracked %d\n%s\n", i, pad), 0o644)
	}
	return dir
}

// BenchmarkDirtyVsClean is issue 26's dirty-state figure: a 12-agent plan
// on three workers from a clean BROOD_BENCH_FILES (10,000)-file checkout,
// and from the same checkout with 1,000 files modified and 10,000
// untracked ones added (4 KiB each, 40 MiB), each run on a fresh fleet
// (new clone caches: the first run of the tree pays for its checkout); a
// clone cache per worker, as on three hosts (BROOD_BENCH_SHARED_CACHE=1:
// one for the three, as for workers of one user on one host).
//
//	go test ./internal/engine/temporal -run XXX -bench DirtyVsClean -benchtime 1x
func BenchmarkDirtyVsClean(b *testing.B) {
	n := envInt("BROOD_BENCH_FILES", 10000)
	const k, workers, slots = 12, 3, 4
	p, in := eachPlan(b, k, workers*slots)
	c := sharedServer(b).Client(b)
	script := fleetScript(0)
	for i := 0; i < b.N; i++ {
		clean := dirtyBenchRepo(b, n, false, 0, 0, 0)
		dirty := dirtyBenchRepo(b, n, true, n/10, n, 4096)
		shared := os.Getenv("BROOD_BENCH_SHARED_CACHE") != ""
		cf, _ := fleetOf(b, c, script, clean, workers, slots, shared, nil)
		cw := timedRun(b, cf, p, in, k)
		df, _ := fleetOf(b, c, script, dirty, workers, slots, shared, nil)
		dw := timedRun(b, df, p, in, k)
		// Of which the submitter's capture (once per run).
		blobs, err := blobstore.Open(b.Context(), "file://"+b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		var capt [2]time.Duration
		for j, dir := range []string{clean, dirty} {
			start := time.Now()
			if _, err := codesnap.Capture(b.Context(), blobs, dir); err != nil {
				b.Fatal(err)
			}
			capt[j] = time.Since(start)
		}
		b.Logf("of which the submitter's capture: clean %s, dirty %s", capt[0].Round(time.Millisecond), capt[1].Round(time.Millisecond))
		b.ReportMetric(cw.Seconds(), "clean-s")
		b.ReportMetric(dw.Seconds(), "dirty-s")
		b.ReportMetric(dw.Seconds()/cw.Seconds(), "dirty/clean")
		b.Logf("%d agents on %d workers: clean %d-file tree %s, with %d modified and %d untracked files (4 KiB each) %s: %.2fx",
			k, workers, n, cw.Round(time.Millisecond), n/10, n, dw.Round(time.Millisecond), dw.Seconds()/cw.Seconds())
	}
}
