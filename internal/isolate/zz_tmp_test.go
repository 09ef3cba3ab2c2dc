package isolate

import (
	"testing"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
)

func TestZZLayerTime(t *testing.T) {
	dir := t.TempDir()
	env := &dispatch.Envelope{TaskID: "x", ReadOnly: true, ProjectRoot: t.TempDir(), Workspace: t.TempDir()}
	base := NewPolicyBase(nil)
	var pol sandbox.Policy
	var sh []string
	for r := 0; r < 3; r++ {
		t0 := time.Now()
		for i := 0; i < 100; i++ {
			pol, _ = ChildPolicy(env, dir, base)
		}
		t1 := time.Now()
		for i := 0; i < 100; i++ {
			sh = sharedHidden(base, &pol, append(childKeep(env, dir, pol.Writable), pol.Keep...))
		}
		t2 := time.Now()
		for i := 0; i < 100; i++ {
			l, _ := sandbox.BuildLayer(sh)
			l.Close()
		}
		t3 := time.Now()
		for i := 0; i < 100; i++ {
			p2 := pol
			base.knownLayer(env, dir, &p2, false)
		}
		t4 := time.Now()
		t.Logf("policy %v shared %v build %v knownLayer(cached) %v; %d paths", t1.Sub(t0)/100, t2.Sub(t1)/100, t3.Sub(t2)/100, t4.Sub(t3)/100, len(sh))
	}
}
