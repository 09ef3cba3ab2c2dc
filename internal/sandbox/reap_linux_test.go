package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// reaperEnv makes the test binary reaperChild: the init of a PID
// namespace of its own that reaps orphans (ReapOrphans).
const reaperEnv = "BROOD_TEST_REAPER"

// reaperChild, as pid 1, reaps orphans while it runs commands of its own
// that exit with known statuses, beside commands that leave orphans
// behind. It prints each of its own commands' status that came back
// wrong, then the zombies left once the orphans are gone.
func reaperChild() int {
	if os.Getpid() != 1 {
		fmt.Println("not pid 1")
		return 3
	}
	ReapOrphans()
	done := make(chan struct{})
	go func() { // orphans, all the while
		defer close(done)
		for range 40 {
			_ = exec.Command("sh", "-c", "for i in 1 2 3 4 5; do (true &); done").Run()
		}
	}()
	for i := range 200 {
		err := exec.Command("sh", "-c", fmt.Sprintf("exit %d", i%100)).Run()
		got := 0
		if ee, ok := err.(*exec.ExitError); ok {
			got = ee.ExitCode()
		} else if err != nil {
			got = -1
			fmt.Printf("wrong: %d: %v\n", i, err)
			continue
		}
		if got != i%100 {
			fmt.Printf("wrong: %d: exit %d\n", i, got)
		}
	}
	<-done
	n := -1
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if n = zombies(); n == 0 {
			break
		}
	}
	fmt.Printf("zombies: %d\n", n)
	return 0
}

// zombies counts this process's zombie children.
func zombies() int {
	n := 0
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		b, _ := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		for _, c := range strings.Fields(string(b)) {
			if _, z := statusIDs(c); z {
				n++
			}
		}
	}
	return n
}

// TestReapOrphansLeavesItsOwnChildren: a PID namespace's init that reaps
// its orphans (review prochide P2: they filled a child's process limit)
// reaps every one, and never takes the status of a command it runs itself
// (os/exec's Wait then fails with "no child processes", or an exit status
// is lost), under load of orphans all the while.
func TestReapOrphansLeavesItsOwnChildren(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), reaperEnv+"=1")
	AddNamespaces(cmd, syscall.CLONE_NEWPID, nil)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the reaping init: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "wrong: ") {
		t.Errorf("an exit status of the init's own command was lost:\n%s", out)
	}
	if !strings.Contains(string(out), "zombies: 0\n") {
		t.Errorf("orphans were left zombies:\n%s", out)
	}
}
