package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/broodhq/brood/internal/spawntrace"
	"github.com/broodhq/brood/internal/taskdir"
)

// Sample is one measured run of `brood run` with K subagents.
type Sample struct {
	K           int
	Concurrency int
	Latency     time.Duration
	Wall        time.Duration // fork of the root to its reaping
	CPU         time.Duration // user+sys of the whole tree (wait4's rusage)
	MaxRSSKB    int64         // the largest single process's peak RSS
	Mem         TreeMemory
	Children    int // dispatch directories written
	Done        int // of which result.json says done
	Requests    int // model requests the fake served
	// ChildRequests is the children that made their first model request
	// (counted from the fake's side, so it holds for any agent).
	ChildRequests int
	// SpawnQueued is, per child, its dispatch-log "queued" time to its
	// first model request; SpawnToolUse is from the moment the fake
	// finished sending the parent's tool_use response.
	SpawnQueued  []time.Duration
	SpawnToolUse []time.Duration
	// ModelSpawn is, per child, from the end of the parent's tool_use
	// response to its first request, read from the fake's log alone (so
	// for any command: the floor's children too).
	ModelSpawn []time.Duration
	// Trace is, per child whose spawn was traced (--trace), its stages
	// from the parent's tool_use sent to its first request.
	Trace [][]spawntrace.Stage
	// Root is the root's own run, stage by stage (--trace, K=0).
	Root []spawntrace.Stage
	// Split is the run's CPU split between its parent side and its
	// children (cpusplit.go).
	Split CPUSplit
	// Sampled says the memory sampler read /proc throughout the run: its
	// memory figures are used, never its wall, CPU or latencies (the
	// sampler's reads slow the tree it measures). A run without it gives
	// those and no memory figure.
	Sampled bool
}

// project is the throwaway repository brood runs in: a git repository with
// a README the children read, and an empty HOME so no user agents or
// settings leak into the measurement.
type project struct {
	root, home, readme string
	// trash holds earlier runs' records, moved aside rather than deleted
	// (see clean); runs counts them.
	trash string
	runs  int
}

func newProject(dir string, git bool) (*project, error) {
	p := &project{root: filepath.Join(dir, "project"), home: filepath.Join(dir, "home"), trash: filepath.Join(dir, "trash")}
	p.readme = filepath.Join(p.root, "README.md")
	for _, d := range []string{p.root, p.home, filepath.Join(p.root, "pkg")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	var readme strings.Builder
	readme.WriteString("# bench project\n\nA small project for brood's delegation benchmark.\n\n")
	for i := range 40 {
		fmt.Fprintf(&readme, "Area %d is handled by pkg/area%d.go.\n", i, i)
	}
	if err := os.WriteFile(p.readme, []byte(readme.String()), 0o644); err != nil {
		return nil, err
	}
	for i := range 8 {
		src := fmt.Sprintf("package pkg\n\n// Area%d is one area.\nfunc Area%d() int { return %d }\n", i, i, i)
		if err := os.WriteFile(filepath.Join(p.root, "pkg", fmt.Sprintf("area%d.go", i)), []byte(src), 0o644); err != nil {
			return nil, err
		}
	}
	if git {
		// No automatic gc or maintenance in the project, by any git (the
		// bench's or brood's): a commit of thousands of files forks a
		// detached `git gc --auto` that would repack during the timed runs.
		if err := p.git([]string{"init", "-q"}, []string{"config", "gc.auto", "0"}, []string{"config", "maintenance.auto", "false"},
			[]string{"add", "."}, []string{"commit", "-q", "-m", "bench project"}); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// git runs each git command in the project, in order, to its end.
func (p *project) git(cmds ...[]string) error {
	for _, args := range cmds {
		cmd := exec.Command("git", args...)
		cmd.Dir = p.root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@localhost",
			"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@localhost", "HOME="+p.home)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s in %s: %v\n%s", args[0], p.root, err, out)
		}
	}
	return nil
}

// clean moves the previous run's records out of the project so each run
// counts only its own. They are moved, not deleted, until the whole bench
// is over: ext4 without a journal (this VM's disk) scans past every inode
// deleted in the last minute (five, while its block is dirty) each time it
// allocates one, so deleting a run of K=256's thousands of files would be
// paid by the next runs' file creations and measured as brood's cost.
// The record directories stay, with the .gitignore brood keeps in each:
// every run is a project's next, as a user's runs after the first are,
// not its first (which makes them and writes their .gitignores).
func (p *project) clean() error {
	p.runs++
	dst := filepath.Join(p.trash, strconv.Itoa(p.runs))
	for _, d := range []string{"dispatch", "sessions", "outputs"} {
		src := filepath.Join(taskdir.Open(p.root).StateDir(), d)
		entries, err := os.ReadDir(src)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.Name() == ".gitignore" {
				continue
			}
			if err := os.MkdirAll(filepath.Join(dst, d), 0o755); err != nil {
				return err
			}
			if err := os.Rename(filepath.Join(src, e.Name()), filepath.Join(dst, d, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// env is the root's whole environment: nothing inherited but PATH, so the
// run cannot pick up a real API key or the user's settings.
func (h *Harness) env(conc int) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.proj.home, "BROOD_CONCURRENCY=" + strconv.Itoa(conc)}
	switch h.cfg.Provider {
	case "openai":
		env = append(env, "OPENAI_BASE_URL="+h.fake.URL+"/v1", "OPENAI_API_KEY=bench-key")
	default:
		env = append(env, "ANTHROPIC_BASE_URL="+h.fake.URL, "ANTHROPIC_API_KEY=bench-key")
	}
	if h.cfg.Child != "" {
		env = append(env, "BROOD_CHILD_EXE="+h.cfg.Child)
	}
	if h.cfg.Warm > 0 {
		env = append(env, "BROOD_WARM="+strconv.Itoa(h.cfg.Warm))
	}
	if h.cfg.Trace {
		env = append(env, spawntrace.EnvVar+"=1")
	}
	return append(env, h.cfg.Env...)
}

func (h *Harness) modelSpec() string { return modelSpec(h.cfg.Provider) }

func modelSpec(provider string) string {
	if provider == "openai" {
		return "openai/gpt-bench"
	}
	return "anthropic/claude-bench"
}

// runOnce runs the root once with k Task calls and measures it; sampled
// runs the memory sampler beside it (runCmd).
func (h *Harness) runOnce(ctx context.Context, k, conc int, latency time.Duration, sampled bool) (*Sample, error) {
	return h.runCmd(ctx, []string{h.cfg.Brood, "run", "--model", h.modelSpec()}, h.env(conc), k, conc, latency, sampled)
}

// runFloor runs the floor of a whole run once, the same way: a bare SDK
// parent and k bare SDK children, against the same fake.
func (h *Harness) runFloor(ctx context.Context, k, conc int, latency time.Duration, sampled bool) (*Sample, error) {
	argv := []string{h.floorChild, "-parent", strconv.Itoa(k), h.fake.URL, h.dir}
	if _, err := readFloorCPU(h.dir); err != nil { // none left from a failed run
		return nil, err
	}
	s, err := h.runCmd(ctx, argv, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.proj.home}, k, conc, latency, sampled)
	if err != nil {
		return nil, err
	}
	if s.Split, err = readFloorCPU(h.dir); err != nil {
		return nil, err
	}
	return s, nil
}

// prompt is the root's task in every run.
const prompt = "explore the project's areas"

// runCompare runs the --compare command once, the same way: its words with
// the prompt appended, in the same project, against the same fake, with
// the environment brood gets less the choice of child binary.
func (h *Harness) runCompare(ctx context.Context, k, conc int, latency time.Duration, sampled bool) (*Sample, error) {
	env := slices.DeleteFunc(h.env(conc), func(e string) bool {
		return (strings.HasPrefix(e, "BROOD_CHILD_EXE=") && !h.cfg.coldSelf) || strings.HasPrefix(e, "BROOD_WARM=")
	})
	if h.cfg.Warm > 0 {
		env = append(env, "BROOD_WARM=0") // the other side of --warm: cold
	}
	return h.runCmd(ctx, h.cfg.Compare, env, k, conc, latency, sampled)
}

// runCmd runs argv once against the fake and measures it. With sampled
// (and the sampler on: Config.Sample > 0) the memory sampler reads the
// tree's /proc every Config.Sample throughout, and the run is kept for its
// memory alone; without it nothing reads the tree while it runs.
func (h *Harness) runCmd(ctx context.Context, argv, env []string, k, conc int, latency time.Duration, sampled bool) (*Sample, error) {
	if err := h.proj.clean(); err != nil {
		return nil, err
	}
	h.fake.Reset(k, latency, h.proj.readme)
	if h.writer != "" {
		h.fake.Writers(h.writer)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], append(slices.Clone(argv[1:]), prompt)...)
	cmd.Dir = h.proj.root
	cmd.Env = env
	if h.cfg.Trace {
		// The root traces its own start from here (a command that is not
		// brood ignores it).
		cmd.Env = append(slices.Clone(env), spawntrace.RootEnvVar+"="+strconv.FormatInt(spawntrace.Now(), 10))
	}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	memc := make(chan TreeMemory, 1)
	sampled = sampled && h.cfg.Sample > 0
	if sampled {
		go func() { memc <- sampleTree(sctx, cmd.Process.Pid, h.cfg.Sample) }()
	} else {
		memc <- TreeMemory{}
	}
	err := cmd.Wait()
	wall, exited := time.Since(start), spawntrace.Now()
	stop()
	mem := <-memc
	if err != nil {
		return nil, fmt.Errorf("%s (K=%d): %v\nstderr:\n%s", filepath.Base(argv[0]), k, err, tailOf(stderr.String(), 2000))
	}
	s := &Sample{K: k, Concurrency: conc, Latency: latency, Wall: wall, Mem: mem, Sampled: sampled}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		// wait4 reports the process and every descendant it reaped.
		s.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		s.MaxRSSKB = ru.Maxrss
	}
	log := h.fake.Log()
	s.Requests = len(log)
	firsts := map[int]bool{}
	for _, r := range log {
		if r.Role == RoleChild && r.Turn == 1 {
			firsts[r.Index] = true
		}
	}
	s.ChildRequests = len(firsts)
	s.ModelSpawn = modelSpawn(log)
	for _, r := range log {
		if r.Err != "" {
			return nil, fmt.Errorf("K=%d: the fake could not answer request (%s turn %d): %s", k, r.Role, r.Turn, r.Err)
		}
	}
	if err := h.readDispatch(s, log); err != nil {
		return nil, err
	}
	if h.cfg.Trace && k == 0 {
		s.Root = h.rootStages(log, exited)
	}
	_ = os.Remove(filepath.Join(h.dir, floorTraceFile)) // read or not, never the next run's
	return s, nil
}

// readDispatch counts the dispatch directories and computes each child's
// spawn latency by matching its task marker to its first model request.
func (h *Harness) readDispatch(s *Sample, log []Request) error {
	var toolUseSent time.Time
	var sentMono int64
	first, firstMono := map[int]time.Time{}, map[int]int64{}
	for _, r := range log {
		switch {
		case r.Role == RoleParent && r.Turn == 1 && toolUseSent.IsZero():
			toolUseSent, sentMono = r.Sent, r.SentMono
		case r.Role == RoleChild && r.Turn == 1:
			if _, ok := first[r.Index]; !ok {
				first[r.Index], firstMono[r.Index] = r.Arrived, r.ArrivedMono
			}
		}
	}
	root := taskdir.Open(h.proj.root).DispatchRoot()
	ents, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, e := range ents {
		dir := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "envelope.json")); !e.IsDir() || err != nil {
			continue // not a task: a warm child's directory that no task took
		}
		s.Children++
		if c, ok := childCPU(dir); ok {
			s.Split.Children = append(s.Split.Children, c)
		}
		var env struct {
			Prompt string `json:"prompt"`
		}
		var lg struct {
			Queued time.Time `json:"queued"`
		}
		var res struct {
			Status string `json:"status"`
		}
		if err := readJSON(filepath.Join(dir, "envelope.json"), &env); err != nil {
			return err
		}
		if err := readJSON(filepath.Join(dir, "dispatch-log.json"), &lg); err != nil {
			return err
		}
		if readJSON(filepath.Join(dir, "result.json"), &res) == nil && res.Status == "done" {
			s.Done++
		}
		m := taskMarker().FindStringSubmatch(env.Prompt)
		if m == nil {
			continue
		}
		i, _ := strconv.Atoi(m[1])
		at, ok := first[i]
		if !ok {
			continue
		}
		s.SpawnQueued = append(s.SpawnQueued, at.Sub(lg.Queued))
		if !toolUseSent.IsZero() {
			s.SpawnToolUse = append(s.SpawnToolUse, at.Sub(toolUseSent))
		}
		if st, ok := traceStages(dir, sentMono, firstMono[i]); ok {
			s.Trace = append(s.Trace, st)
		}
	}
	return nil
}

// modelSpawn is, per child, the parent's first tool_use response sent to
// the child's first request's arrival, from the fake's log.
func modelSpawn(log []Request) []time.Duration {
	var sent time.Time
	seen := map[int]bool{}
	var out []time.Duration
	for _, r := range log {
		switch {
		case r.Role == RoleParent && r.Turn == 1 && sent.IsZero():
			sent = r.Sent
		case r.Role == RoleChild && r.Turn == 1 && !seen[r.Index] && !sent.IsZero():
			seen[r.Index] = true
			out = append(out, r.Arrived.Sub(sent))
		}
	}
	return out
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
