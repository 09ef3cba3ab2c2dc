package dispatch

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// execChainEnv makes the test binary a process that executes itself again
// that many times, each time from a thread that is not its first, then
// says "ready" and waits for its stdin to close.
const execChainEnv = "BROOD_DISPATCH_EXEC_CHAIN"

func init() {
	if os.Getenv(execChainEnv) != "" {
		// The main goroutine keeps the first thread: the exec below runs
		// on another one, as a child's Landlock re-exec may.
		runtime.LockOSThread()
	}
}

// TestExecChainHelper is the process TestAliveThroughExec watches; it does
// nothing in a normal run.
func TestExecChainHelper(t *testing.T) {
	left, err := strconv.Atoi(os.Getenv(execChainEnv))
	if err != nil {
		return
	}
	if left == 0 {
		os.Stdout.WriteString("ready\n")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	env := []string{execChainEnv + "=" + strconv.Itoa(left-1)}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, execChainEnv+"=") {
			env = append(env, kv)
		}
	}
	err = syscall.Exec("/proc/self/exe", os.Args, env)
	t.Fatalf("exec: %v", err)
}

// TestAliveThroughExec: a process executing a new image from a thread that
// is not its first (the kernel ends the leader first; for a while its pid
// reads as a zombie, exiting, with an empty command line) is alive all
// along. Taking it for gone made a listing call a child that re-executes
// itself under Landlock "killed", though it went on to write its result.
func TestAliveThroughExec(t *testing.T) {
	const id = "01ALIVETHROUGHEXEC00000000"
	cmd := exec.Command(os.Args[0], "-test.run=^TestExecChainHelper$", id)
	cmd.Env = append(os.Environ(), execChainEnv+"=200")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A failed look below must not leave the chain's last image waiting.
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	ready := make(chan struct{})
	go func() {
		_, _ = bufio.NewReader(stdout).ReadString('\n')
		close(ready)
	}()
	polls, gone := 0, 0
	for done := false; !done; {
		select {
		case <-ready:
			done = true
		default:
		}
		polls++
		if !Alive(cmd.Process.Pid, id) {
			gone++
		}
	}
	if gone > 0 {
		t.Errorf("Alive said a process executing itself was gone in %d of %d looks", gone, polls)
	}
	if !Alive(cmd.Process.Pid, id) {
		t.Error("Alive: the final image, waiting, is gone")
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the exec chain: %v", err)
	}
	if Alive(cmd.Process.Pid, id) {
		t.Error("Alive: a reaped process is alive")
	}
	t.Logf("%d looks through 200 execs", polls)
}
