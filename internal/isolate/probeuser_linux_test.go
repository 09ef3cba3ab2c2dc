package isolate

import (
	"os"
	"strings"
	"testing"
)

// TestOverlayMountsForAUser: a user other than root mounts an overlay in
// its own user and mount namespace (the probe's child, as every writer's:
// mountCaps). overlayfs makes its workdir's "work" directory mode 0 and
// works in it with the mounter's credentials, so with CAP_SYS_ADMIN alone
// every mount was EACCES (brood-unpriv's writers got a worktree copy and
// empty Go caches); and what it leaves in that directory is the user's to
// remove (openWork). Run as root, the test runs itself again as nobody.
func TestOverlayMountsForAUser(t *testing.T) {
	if os.Getuid() == 0 {
		if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil && strings.TrimSpace(string(b)) == "0" {
			t.Skip("no user namespaces on this machine (user.max_user_namespaces is 0)")
		}
		asNobody(t, "TestOverlayMountsForAUser")
		return
	}
	base := t.TempDir()
	ok, userxattr, why := probeOverlayIn(t.Context(), base)
	if !ok {
		t.Fatalf("overlay in a user namespace as uid %d: %s", os.Getuid(), why)
	}
	// What overlayfs left in its workdir is the user's to remove.
	if left, _ := os.ReadDir(base); len(left) != 0 {
		t.Errorf("the probe's directory stays in %s: %v", base, left)
	}
	t.Logf("overlay as uid %d mounts (userxattr=%v)", os.Getuid(), userxattr)
}
