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
	t0 := time.Now()
	pol, _ := ChildPolicy(env, dir, base)
	t1 := time.Now()
	sh := sharedHidden(base, &pol, append(childKeep(env, dir, pol.Writable), pol.Keep...))
	t2 := time.Now()
	l, err := sandbox.BuildLayer(sh)
	t3 := time.Now()
	t.Logf("policy %v shared %v build %v err %v: %d paths %v", t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), err, len(sh), sh)
	_ = l
	t4 := time.Now()
	_ = dirsStamp(waysTo(sh))
	t.Logf("stamp %v", time.Since(t4))
	for i := 0; i < 3; i++ {
		t5 := time.Now()
		sandbox.BuildLayer(sh)
		t.Logf("again %v", time.Since(t5))
	}
	t.Logf("hidden %d %v around %v", len(pol.Hidden), pol.Hidden, pol.HiddenAround)
}
