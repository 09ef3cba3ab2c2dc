package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestCPUSplit(t *testing.T) {
	ms := time.Millisecond
	run := func(cpu time.Duration, children ...time.Duration) *Sample {
		return &Sample{CPU: cpu, Split: CPUSplit{Children: children}}
	}
	base := splitRow([]*Sample{run(10 * ms), run(12 * ms), run(11 * ms)})
	if base.Parent != 11*ms || base.N != 0 {
		t.Fatalf("K=0: %+v", base)
	}
	for _, tc := range []struct {
		name                 string
		runs                 []*Sample
		parent, kids, child  time.Duration
		marginal, childrenPK time.Duration
		n                    int
	}{
		{"two children", []*Sample{run(51*ms, 20*ms, 20*ms), run(45*ms, 15*ms, 19*ms), run(47*ms, 17*ms, 18*ms)},
			11 * ms, 35 * ms, 18500 * time.Microsecond, 0, 17500 * time.Microsecond, 2},
		{"a child without a figure", []*Sample{run(31*ms, 20*ms), run(51*ms, 20*ms, 20*ms)},
			11 * ms, 30 * ms, 20 * ms, 0, 15 * ms, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := splitRow(tc.runs)
			r.marginal(2, base)
			if r.Parent != tc.parent || r.Children != tc.kids || r.Child != tc.child || r.N != tc.n {
				t.Fatalf("got parent %s children %s child %s n %d", r.Parent, r.Children, r.Child, r.N)
			}
			if r.MarginalParent != tc.marginal || r.ChildrenPerK != tc.childrenPK {
				t.Fatalf("marginal parent %s, children per K %s", r.MarginalParent, r.ChildrenPerK)
			}
		})
	}
}

func TestReadFloorCPU(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{floorCPUPrefix + "0": "1500000", floorCPUPrefix + "1": "2500000\n", "floor-result-0.json": "{}"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := readFloorCPU(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Sum() != 4*time.Millisecond || len(c.Children) != 2 {
		t.Fatalf("read %v", c.Children)
	}
	if again, _ := readFloorCPU(dir); len(again.Children) != 0 {
		t.Fatal("the records were read twice: they were not removed")
	}
	if _, err := os.Stat(filepath.Join(dir, "floor-result-0.json")); err != nil {
		t.Fatal("another file was removed:", err)
	}
}
