//go:build linux

package sandbox

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestBaseForChildEmptiesInheritable: a root parent's starting thread
// holds no inheritable capability once BaseForChild has run, so a child
// it starts gets none (root's exec adds inheritable to the bounding set)
// whether or not the child gets a user namespace of its own.
func TestBaseForChildEmptiesInheritable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root holds capabilities it can make inheritable")
	}
	got := make(chan uint32, 1)
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		data[0].Inheritable |= 1 << unix.CAP_NET_RAW
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		if _, err := BaseForChild(Policy{Network: true}); err != nil {
			errc <- err
			return
		}
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		got <- data[0].Inheritable | data[1].Inheritable
	}()
	select {
	case err := <-errc:
		t.Fatal(err)
	case inh := <-got:
		if inh != 0 {
			t.Fatalf("inheritable set %#x after BaseForChild, want empty", inh)
		}
	}
}
