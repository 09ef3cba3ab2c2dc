package isolate

import (
	"os/exec"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/taskdir"
)

// BenchmarkParentConfine: what the parent does per read-only child for
// its sandbox (its mounts, its policy and layer), the dispatcher's base
// (and layer) built before the loop.
func BenchmarkParentConfine(b *testing.B) {
	b.Setenv("HOME", b.TempDir())
	root := Resolved(b.TempDir())
	td := taskdir.Open(root).MustTask(taskdir.NewID())
	if err := td.Create(); err != nil {
		b.Fatal(err)
	}
	env := dispatch.Envelope{TaskID: td.ID(), ReadOnly: true, Depth: 1, ProjectRoot: root, Workspace: root}
	base := NewPolicyBase(nil)
	run := func() {
		done := make(chan struct{})
		sandbox.OnThrowawayThread(func() { defer close(done); confineOnce(b, &env, td, base) })
		<-done
	}
	run()
	for b.Loop() {
		run()
	}
}

func confineOnce(b *testing.B, env *dispatch.Envelope, td *taskdir.Dir, base *PolicyBase) {
	{
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}}
		if _, err := HoldReadOnly(cmd, env, td.Path(), base, true); err != nil {
			b.Error(err)
		}
		if err := ConfineChild(cmd, env, td, nil, base); err != nil {
			b.Error(err)
		}
	}
}
