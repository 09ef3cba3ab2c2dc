package temporal_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/local"
	"github.com/broodhq/brood/internal/taskdir"
)

// childLedger sums the CPU of the brood children of some projects (each
// task's output.json cpu_ms: the child's wait4 rusage, whatever it started
// and reaped included; whole milliseconds, truncated), a task once: what
// the children themselves cost, apart from the other programs the bench
// process waits for (the submitter's capture runs git once a run).
type childLedger struct {
	roots []string
	seen  map[string]bool
}

func newChildLedger(roots ...string) *childLedger {
	return &childLedger{roots: roots, seen: map[string]bool{}}
}

// take is the CPU of the children that ended since the last take, and
// how many they were.
func (l *childLedger) take() (time.Duration, int) {
	var sum time.Duration
	n := 0
	for _, root := range l.roots {
		dir := taskdir.Open(root).DispatchRoot()
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			key := filepath.Join(dir, e.Name())
			if l.seen[key] {
				continue
			}
			b, err := os.ReadFile(filepath.Join(key, taskdir.Output))
			if err != nil {
				continue // not ended yet: a later take counts it
			}
			var o struct {
				CPUMS *int64 `json:"cpu_ms"`
			}
			if json.Unmarshal(b, &o) != nil || o.CPUMS == nil {
				continue
			}
			l.seen[key] = true
			sum += time.Duration(*o.CPUMS) * time.Millisecond
			n++
		}
	}
	return sum, n
}

// BenchmarkFleetChildCPU is the same brood child's CPU on each path: a
// plan of BROOD_BENCH_CALLS (40) read-only calls at 0 ms through the local
// engine and through one code worker (warm: its first run is left out)
// shipping the same 1,000-file tree, BROOD_BENCH_SLOTS (4) at a time,
// alternated BROOD_BENCH_ROUNDS (3) times (each side first in every other
// round); each run logs the children's
// own CPU a call (childLedger) and what else the bench process waited for
// (the submitter's capture: git).
//
//	CI=true go test ./internal/engine/temporal -run XXX -bench FleetChildCPU -benchtime 1x
func BenchmarkFleetChildCPU(b *testing.B) {
	k := envInt("BROOD_BENCH_CALLS", 40)
	rounds := envInt("BROOD_BENCH_ROUNDS", 3)
	slots := envInt("BROOD_BENCH_SLOTS", 4)
	p, in := eachPlan(b, k, slots)
	srv := sharedServer(b)
	c := srv.Client(b)
	script := fleetScript(0)
	lp := newProject(b, script)
	benchFill(b, lp.root, 1000)
	loc := local.New(local.Config{ProjectRoot: lp.root, Runner: lp.dispatcherAt(b, slots, benchRates()), Concurrency: slots})
	fleet, roots := fleetOf(b, c, script, benchRepo(b, 1000), 1, slots, false, nil)
	timedRun(b, fleet, p, in, k) // cold
	ledgers := map[string]*childLedger{"local": newChildLedger(lp.root), "fleet": newChildLedger(roots...)}
	ledgers["fleet"].take()
	for i := 0; i < b.N; i++ {
		for r := range rounds {
			sides := []string{"local", "fleet"}
			if r%2 == 1 {
				sides = []string{"fleet", "local"} // neither always first
			}
			for _, side := range sides {
				var eng engine.Engine = loc
				if side == "fleet" {
					eng = fleet
				}
				at := cpuNow(srv.Pid())
				timedRun(b, eng, p, in, k)
				own, n := ledgers[side].take()
				b.Logf("round %d, %s: %s", r, side, at.perCallOwn(srv.Pid(), k, own, n))
			}
		}
	}
}
