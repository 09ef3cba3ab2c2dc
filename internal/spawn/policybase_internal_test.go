package spawn

import "testing"

// TestInSharesThePolicyBase: a fleet worker makes a dispatcher per call
// (In); each shares its parent's policy parts and the layers built from
// them, so a worker's calls on one base build their known-projects layer
// once, not once a call (a 300-call plan spent 1.6 s of the worker's CPU
// building it again).
func TestInSharesThePolicyBase(t *testing.T) {
	d, err := New(Config{ProjectRoot: t.TempDir(), MaxDepth: 5, Placed: true, Exe: "/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	base := d.policyBase()
	for range 2 {
		nd, err := d.In(t.TempDir(), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if nd.policyBase() != base {
			t.Fatal("a dispatcher In a workspace built policy parts of its own")
		}
	}
}
