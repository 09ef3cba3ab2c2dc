package temporal_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/shortid"
	"github.com/broodhq/brood/internal/workflow"
)

// chainScript: in phase one, "write one" writes one.txt, "edit a" and
// "edit b" change the same line of a.txt each its own way; in phase two,
// "read one" reads one.txt and a.txt and writes what it saw to two.txt
// (when it sees no one.txt it writes nothing).
const chainScript = `
agents:
  general-purpose:
    - cases:
        - if: "write one"
          tools:
            - Write: {file_path: "one.txt", content: "from phase one\n"}
        - if: "edit a"
          tools:
            - Write: {file_path: "a.txt", content: "edited by A\n"}
        - if: "edit b"
          tools:
            - Write: {file_path: "a.txt", content: "edited by B\n"}
        - if: "read one"
          tools:
            - Read: {file_path: "one.txt"}
            - Read: {file_path: "a.txt"}
      say: "nothing to do"
    - cases:
        - if: "from phase one"
          tools:
            - Write: {file_path: "two.txt", content: "{{result 0}}|{{result 1}}"}
      say: "## What I did\nWrote.\n\n## Files changed\none.txt, a.txt"
    - say: "## What I did\nWrote two.txt.\n\n## Files changed\ntwo.txt"
`

const chainPlan = `name: chained
phases:
  - id: first
    parallel:
      - {agent: general-purpose, prompt: "write one"}
  - id: clash
    parallel:
      - {agent: general-purpose, prompt: "edit a"}
      - {agent: general-purpose, prompt: "edit b"}
  - id: second
    depends_on: [first]
    parallel:
      - {agent: general-purpose, prompt: "read one"}
`

// TestLaterPhaseSeesEarlierPhasesWrites: a plan's later phase on the
// fleet starts from the run's tree with the earlier phase's changes in it
// (two workers, each its own clone cache); of two writers of one phase
// that change the same line, the one that finished second is left out:
// its call is not-applied with null output, as a local isolated writer's
// conflict is, its phase partial and so the run; the submitter lands the
// run's tree once, when the run ends.
func TestLaterPhaseSeesEarlierPhasesWrites(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	a := startWorkerProcWith(t, srv.Addr, q, chainScript, store, 1, writerSettings)
	b := startWorkerProcWith(t, srv.Addr, q, chainScript, store, 1, writerSettings)
	dir := submitterRepo(t)
	eng := codeEngine(t, q, dir, store)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := eng.Run(ctx, engine.RunRequest{Plan: enginetest.Plan(t, chainPlan), Source: "plan.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != workflow.RunPartial || !strings.Contains(res.Reason, "phase clash partial") {
		t.Fatalf("run %s (%s); want partial: a change of phase clash did not land", res.Status, res.Reason)
	}
	first := res.Phases[0].Calls
	if !strings.Contains(first[0].Landed, "in the run's tree: one.txt") {
		t.Errorf("the writer of one.txt: landed %q", first[0].Landed)
	}
	clash := res.Phases[1].Calls
	var won, lost []string
	for _, c := range clash {
		switch {
		case strings.Contains(c.Landed, "conflict") && c.Status == workflow.CallNotApplied && c.Output == nil:
			lost = append(lost, c.Key)
		case strings.Contains(c.Landed, "in the run's tree") && c.Status == workflow.CallDone:
			won = append(won, c.Key)
		}
	}
	if len(won) != 1 || len(lost) != 1 {
		t.Fatalf("phase clash's records %+v; want one of the a.txt writers done in the run's tree and one not-applied in conflict", clash)
	}
	// The left-out patch is kept in the submitter's state dir, named by
	// the run and the task, and its record names that file (fleetqa3 P2-7),
	// not the worker's temporary copy.
	for _, c := range clash {
		if c.Status != workflow.CallNotApplied {
			continue
		}
		m := regexp.MustCompile(`its patch is kept in (\S+) \(`).FindStringSubmatch(c.Error)
		if m == nil || !strings.Contains(m[1], filepath.Join(res.RunID, c.TaskID+".patch")) || strings.Contains(c.Landed, "brood-chain-") || strings.Contains(c.Landed, "--cached") {
			t.Fatalf("not-applied %s: error %q, landed %q; want its kept patch file named", c.Key, c.Error, c.Landed)
		}
		if b, err := os.ReadFile(m[1]); err != nil || !strings.Contains(string(b), "a.txt") {
			t.Errorf("kept patch %s: %v, %q", m[1], err, b)
		}
	}
	// A prefix both writers of phase clash share is ambiguous: the
	// error names them, never "no task" (fleetqa3 P2-1).
	p := clash[0].TaskID
	for !strings.HasPrefix(clash[1].TaskID, p) {
		p = p[:len(p)-1]
	}
	if _, err := eng.Task(ctx, p); !errors.Is(err, shortid.ErrAmbiguous) || errors.Is(err, engine.ErrNotFound) ||
		!strings.Contains(err.Error(), clash[0].TaskID) || !strings.Contains(err.Error(), clash[1].TaskID) {
		t.Errorf("tasks show %s (a prefix of two plan calls): %v; want both named", p, err)
	}
	if st := res.Phases[2].Status; st != workflow.PhaseDone {
		t.Errorf("phase second is %s; it depends only on phase first", st)
	}
	aTxt := "edited by A\n"
	if won[0] == clash[1].Key {
		aTxt = "edited by B\n"
	}
	if got := read(t, dir, "a.txt"); got != aTxt {
		t.Errorf("a.txt is %q; want the writer that landed (%s): %q", got, won[0], aTxt)
	}
	if got := read(t, dir, "one.txt"); got != "from phase one\n" {
		t.Errorf("one.txt is %q", got)
	}
	if two := read(t, dir, "two.txt"); !strings.Contains(two, "from phase one") {
		t.Errorf("two.txt is %q; phase second must see phase first's one.txt", two)
	}
	if !strings.Contains(res.Landed, "applied") {
		t.Errorf("run landed %q; want its tree applied", res.Landed)
	}
	if staged := gitT(t, dir, "diff", "--cached", "--name-only"); staged != "" {
		t.Errorf("the run's change was staged: %q", staged)
	}
	if len(a.taskDirs()) == 0 || len(b.taskDirs()) == 0 {
		t.Errorf("the calls ran on one worker only (%d, %d tasks)", len(a.taskDirs()), len(b.taskDirs()))
	}
}
