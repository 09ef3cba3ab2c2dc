package bench

import (
	"strings"
	"testing"
	"time"
)

func TestModelTime(t *testing.T) {
	l := 500 * time.Millisecond
	for _, c := range []struct {
		k, conc int
		want    time.Duration
	}{{0, 5, l}, {1, 5, 4 * l}, {16, 16, 4 * l}, {16, 5, 10 * l}} {
		if got := modelTime(c.k, c.conc, l); got != c.want {
			t.Errorf("modelTime(%d, %d) = %s, want %s", c.k, c.conc, got, c.want)
		}
	}
}

func TestClassify(t *testing.T) {
	child := classify([]byte(`{"system":[{"text":"You are a focused subagent (explore) working... bench-task-7: read"}],"messages":[{"role":"user","content":"Begin"}]}`))
	if child.Role != RoleChild || child.Index != 7 || child.Turn != 1 {
		t.Errorf("child first turn: %+v", child)
	}
	parent := classify([]byte(`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x"}]}]}`))
	if parent.Role != RoleParent || parent.Turn != 2 {
		t.Errorf("parent second turn: %+v", parent)
	}
	oai := classify([]byte(`{"messages":[{"role":"system","content":"You are a focused subagent (explore) bench-task-3"},{"role":"tool","content":"x"}]}`))
	if oai.Role != RoleChild || oai.Index != 3 || oai.Turn != 2 {
		t.Errorf("openai child second turn: %+v", oai)
	}
}

// TestReportRatios: the targets table shows each figure against this run's
// floor and, with --compare, against the compared command's; the
// linearity table shows the parent's side per child as a ratio to K=16.
func TestReportRatios(t *testing.T) {
	ms := time.Millisecond
	rep := &Report{
		Config: Config{Compare: []string{"other", "run"}, ModelLatency: 500 * ms},
		Floor:  Floor{ExecWall: 2 * ms, ExecCPU: 2 * ms, ChildWall: 10 * ms, ChildCPU: 10 * ms, IdleWall: 8 * ms, IdleArgs: "brood-child"},
		Timing: []Row{{K: 0}, {K: 1, Spawn: 12 * ms}, {K: 16, MarginalCPU: 20 * ms, MarginalWall: 15 * ms, Spawn: 160 * ms, SpawnToolUse: 320 * ms},
			{K: 64, MarginalCPU: 22 * ms, MarginalWall: 15 * ms, Spawn: 640 * ms, SpawnToolUse: 2560 * ms}},
		CompareTiming: []Row{{K: 0}, {K: 1}, {K: 16, MarginalCPU: 40 * ms, MarginalWall: 30 * ms}, {K: 64}},
		Model:         []Row{{K: 16, Wall: 2200 * ms, ModelTime: 2000 * ms, PSSKB: 80 << 10}},
		CompareModel:  []Row{{K: 16, Wall: 4400 * ms, ModelTime: 2000 * ms, PSSKB: 160 << 10}},
	}
	var b strings.Builder
	rep.Markdown(&b)
	out := b.String()
	for _, want := range []string{
		"| marginal CPU per subagent at K=16 ÷ bare-SDK child | 20.0 ms | 10.0 ms | 2.00× | ≤ 1.15× | **missed** | 40.0 ms | 0.50× |",
		"| median spawn latency at K=1 (queued → 1st request) ÷ static exec | 12.0 ms | 2.00 ms | 6.00× | ≤ 3.00× | **missed** | – | – |",
		"| total ÷ model time, 500ms latency, K=16 | 2200 ms | 2000 ms | 1.100 | ≤ 1.03 | **missed** | 2.200 | 0.50× |",
		"| summed PSS, parent + 16 live children | 80.0 MiB | | | ≤ 60 MiB | **missed** | 160.0 MiB | 0.50× |",
		"### Linearity in K",
		"| 64 | 22.0 ms | 1.10× | 15.0 ms | 1.00× | 40.0 ms | 2.00× | 10.0 ms | 1.00× |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestParseInitTrace(t *testing.T) {
	in := "init internal/bytealg @0.005 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"init github.com/alecthomas/chroma/v2/lexers @9.4 ms, 16 ms clock, 2289920 bytes, 25858 allocs\n" +
		"brood: something else\n" +
		"init net/netip @46 ms, 1.7 ms clock, 728 bytes, 18 allocs\n"
	got := parseInitTrace([]byte(in))
	want := []PackageInit{{"internal/bytealg", 0, 0}, {"github.com/alecthomas/chroma/v2/lexers", 16 * time.Millisecond, 2289920}, {"net/netip", 1700 * time.Microsecond, 728}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestIssueTable: issue 29's table reads each figure against the floor of
// a whole run from the same report, with its target and verdict.
func TestIssueTable(t *testing.T) {
	ms := time.Millisecond
	rep := &Report{
		Config: Config{Brood: "/b/brood", ModelLatency: 500 * ms},
		Child:  "/b/brood-child",
		Floor:  Floor{ExecWall: ms},
		Timing: []Row{{K: 0, Wall: 12 * ms, CPU: 10 * ms}, {K: 1, Spawn: 4 * ms, ModelSpawn: 6 * ms},
			{K: 16, MarginalCPU: 11 * ms, MarginalWall: 8 * ms, ModelSpawn: 30 * ms}},
		FloorTiming: []Row{{K: 0, Wall: 6 * ms, CPU: 6 * ms}, {K: 1, ModelSpawn: 5 * ms}, {K: 16, MarginalCPU: 10 * ms, MarginalWall: 8 * ms}},
		SelfTiming:  []Row{{K: 0}, {K: 1}, {K: 16, MarginalCPU: 30 * ms, MarginalWall: 20 * ms}},
		Model:       []Row{{K: 0, RootAnonKB: 3 << 10}, {K: 16, Wall: 2100 * ms, ModelTime: 2000 * ms, PSSKB: 60 << 10, ChildAnonKB: 3 << 10, RootAnonKB: 10 << 10}},
		FloorModel: []Row{{K: 0, RootAnonKB: 2 << 10}, {K: 16, Wall: 2020 * ms, ModelTime: 2000 * ms, PSSKB: 40 << 10, ChildAnonKB: 2 << 10,
			RootAnonKB: 4 << 10}},
	}
	var b strings.Builder
	rep.issueTargets(&b)
	out := b.String()
	for _, want := range []string{
		"| marginal CPU per subagent, K=16 | 11.0 ms | 10.0 ms | 1.10× | ≤ 1.15× | met |",
		"| marginal wall per subagent, K=16 | 8.00 ms | 8.00 ms | 1.00× | ≤ 1.05× | met |",
		"| only brood installed (children re-run it): marginal CPU, K=16, against brood-child's (the floor column) in the same run | 30.0 ms | 11.0 ms | 2.73× | ≤ 1.05× | **missed** |",
		"| only brood installed: marginal wall, K=16, against brood-child's (the floor column) | 20.0 ms | 8.00 ms | 2.50× | ≤ 1.05× | **missed** |",
		"| only brood installed: marginal CPU, K=16, against the floor (for information) | 30.0 ms | 10.0 ms | 3.00× | | |",
		"| root alone (K=0), one turn: wall | 12.0 ms | 6.00 ms | 2.00× | ≤ 2.00× | met |",
		"| root alone (K=0), one turn: CPU | 10.0 ms | 6.00 ms | 1.67× | ≤ 2.00× | met |",
		"| spawn latency, K=1: tool_use sent → child's first request (the model's side) | 6.00 ms | 5.00 ms | 1.20× | ≤ 1.50× | met |",
		"| the same, brood's records: queued → first request | 4.00 ms | exec 1.00 ms | | ≤ 5.00 ms | met |",
		"| spawn latency, K=16 (median, the model's side) | 30.0 ms | 0.00 ms | | ≤ 20.0 ms | **missed** |",
		"| peak summed PSS, parent + 16 children (500ms model latency) | 60.0 MiB | 40.0 MiB | 1.50× | ≤ 1.50× | met |",
		"| a child's private (anonymous) memory, median child (500ms model latency) | 3.0 MiB | 2.0 MiB | 1.50× | | |",
		"| the root's peak private (anonymous) memory, K=0 (500ms model latency) | 3.0 MiB | 2.0 MiB | 1.50× | | |",
		"| the root's peak private (anonymous) memory, K=16 (500ms model latency) | 10.0 MiB | 4.0 MiB | 2.50× | | |",
		"| total ÷ model time, 500ms latency, K=16 | 1.050 | 1.010 | | ≤ 1.03 | **missed** |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
