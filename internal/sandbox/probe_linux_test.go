package sandbox

import "testing"

// TestProbeUserNSAgrees: the dispatcher's probe (user namespaces alone)
// gives the answer the full Probe gives, and says nothing of a network
// namespace it did not try.
func TestProbeUserNSAgrees(t *testing.T) {
	full, alone := Probe(t.Context()), ProbeUserNS(t.Context())
	if alone.UserNS != full.UserNS || alone.LandlockABI != full.LandlockABI {
		t.Fatalf("ProbeUserNS = %+v, Probe = %+v", alone, full)
	}
	if alone.NetNS {
		t.Fatal("ProbeUserNS reports a network namespace it never tried")
	}
	if _, ok := alone.Errors["user_namespaces"]; ok == alone.UserNS {
		t.Fatalf("UserNS %v with errors %v", alone.UserNS, alone.Errors)
	}
}
