// Package devserver runs a real Temporal dev server (the Temporal CLI's
// `temporal server start-dev`) for tests, on loopback, with its state in a
// file so that it can be killed and started again on the same port and
// find its workflows where it left them.
//
// The CLI is found as $BROOD_TEMPORAL_CLI, on PATH, or in $GOPATH/bin
// (scripts/test installs it there). Without it a test is skipped with a
// line saying how to install it, except under CI=true, where it fails:
// CI never skips these tests.
package devserver

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

// Install is how the CLI is installed (what scripts/test runs).
const Install = "go install github.com/temporalio/cli/cmd/temporal@v1.5.1"

// Find locates the Temporal CLI.
func Find() (string, error) {
	if p := os.Getenv("BROOD_TEMPORAL_CLI"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p, nil
	}
	var dirs []string
	if gp := os.Getenv("GOPATH"); gp != "" {
		dirs = append(dirs, filepath.SplitList(gp)...)
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		dirs = append(dirs, filepath.SplitList(string(bytes.TrimSpace(out)))...)
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "bin", "temporal")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", errors.New("the Temporal CLI is not installed: run " + Install)
}

// Server is one dev server process.
type Server struct {
	// Addr is the frontend, host:port.
	Addr string
	// DB is its state file.
	DB string

	tb   testing.TB
	exe  string
	port int
	log  *bytes.Buffer

	mu  sync.Mutex
	cmd *exec.Cmd
	end chan struct{}
}

// Start starts a dev server for the test (stopped at its end), or skips
// the test (fails it under CI=true) when the CLI is missing.
func Start(tb testing.TB) *Server {
	tb.Helper()
	exe, err := Find()
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%v (CI runs the Temporal tests; scripts/test installs it)", err)
		}
		tb.Skipf("%v", err)
	}
	s := &Server{tb: tb, exe: exe, DB: filepath.Join(tb.TempDir(), "temporal.db"), log: &bytes.Buffer{}}
	s.startOnFreePort()
	tb.Cleanup(func() {
		s.Kill()
		if tb.Failed() {
			tb.Logf("temporal dev server log:\n%s", s.Log())
		}
	})
	return s
}

// startOnFreePort starts the server on a port free a moment before, and
// on another when that one was taken before the server bound it (a
// server of another test binary, started at the same moment, picks free
// ports too): at most three times.
func (s *Server) startOnFreePort() {
	s.tb.Helper()
	for try := 1; ; try++ {
		s.port = freePort(s.tb)
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
		if s.startProc(try < 3) {
			return
		}
		s.mu.Lock()
		s.log.Reset()
		s.mu.Unlock()
	}
}

func freePort(tb testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Log is what the server printed.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

type syncWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// startProc starts the server on s.port and waits until it answers; it
// reports false, the server gone, when it could not bind its port and
// retryBind says another may be tried.
func (s *Server) startProc(retryBind bool) bool {
	s.tb.Helper()
	cmd := exec.Command(s.exe, "server", "start-dev", "--headless", "--ip", "127.0.0.1",
		"--port", strconv.Itoa(s.port), "--db-filename", s.DB, "--log-level", "warn",
		// As docs/scale-out.md has users start theirs: SQLite's
		// write-ahead log, synced at its checkpoints, not at every
		// commit. A rollback journal (the default) costs every write a
		// journal file made and removed and three or four fsyncs, and
		// the one writer holds the database meanwhile: at 12 calls at
		// once it was busy most of the time (docs/performance.md, issue
		// 26). A commit still survives the server's crash or kill (the
		// restart tests kill it); an OS crash may lose the last ones.
		"--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
		// Priority keys order tasks only with the new matcher (CLI v1.5.1).
		"--dynamic-config-value", "matching.useNewMatcher=true",
		// As docs/scale-out.md has users set theirs: a scheduled call
		// reaches the matching service through the history shard's
		// transfer queue, whose reader reads at most 20 times a second
		// by default; a plan's calls are all on its workflow's shard, so
		// past 20 tasks a second (12 calls at once at 300 ms) each
		// waited for the next read: 20-40 ms a call against 3-4
		// (docs/performance.md, issue 26).
		"--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000",
		// One partition per queue: priority orders tasks within a
		// partition, and a test watches the order of one queue.
		"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
		"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1")
	cmd.Env = serverEnv(os.Environ(), os.Getenv("BROOD_TEMPORAL_GOMAXPROCS"))
	w := syncWriter{&s.mu, s.log}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// The kernel sends Pdeathsig when the thread that started the server
	// ends, not the process, and the Go runtime ends any thread whose
	// goroutine exits locked to it: as a pool's throw-away start thread
	// does, on whichever thread it ran (an in-process worker's child, a
	// test's). Started from a thread of its own, held until the server is
	// waited for, it dies with this process and only then.
	started, end := make(chan error, 1), make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends after the server
		err := cmd.Start()
		started <- err
		if err == nil {
			_ = cmd.Wait()
			close(end)
		}
	}()
	if err := <-started; err != nil {
		s.tb.Fatalf("start the Temporal dev server: %v", err)
	}
	s.mu.Lock()
	s.cmd, s.end = cmd, end
	s.mu.Unlock()
	return s.waitReady(end, retryBind)
}

// waitReady polls the frontend's health until it answers (the deadline is
// generous: a loaded machine starts it slowly); false when the server
// exited unable to bind its port and retryBind allows another.
func (s *Server) waitReady(end chan struct{}, retryBind bool) bool {
	s.tb.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case <-end:
			if retryBind && strings.Contains(s.Log(), "address already in use") {
				s.mu.Lock()
				s.cmd = nil
				s.mu.Unlock()
				return false
			}
			s.tb.Fatalf("the Temporal dev server exited while starting:\n%s", s.Log())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := client.DialContext(ctx, client.Options{HostPort: s.Addr, Logger: quiet{}})
		if err == nil {
			_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
			c.Close()
		}
		cancel()
		if err == nil {
			return true
		}
		if time.Now().After(deadline) {
			s.tb.Fatalf("the Temporal dev server at %s did not answer within 90s: %v\n%s", s.Addr, err, s.Log())
		}
		time.Sleep(100 * time.Millisecond) // polling an external process's readiness
	}
}

// Kill stops the server with SIGKILL and waits for it to exit.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, end := s.cmd, s.end
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-end
}

// StartAgain starts a killed server again on the same port and state.
func (s *Server) StartAgain() {
	s.tb.Helper()
	s.startProc(false)
}

// Restart kills the server and starts it again on the same port and state.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Kill()
	s.startProc(false)
}

// Client is a client of the server's default namespace, closed at the
// test's end. Its requests travel uncompressed, as temporal.Dial sends
// them to a frontend on loopback (temporal.Compression).
func (s *Server) Client(tb testing.TB) client.Client {
	tb.Helper()
	c, err := client.Dial(client.Options{HostPort: s.Addr, Logger: quiet{},
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: &client.GrpcCompressionNone{}}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return c
}

// quiet is a logger that drops the SDK's lines.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}

// StartShared starts a server that lives as long as the test binary (it
// dies with it): for the tests of a package that never restart it.
func StartShared(tb testing.TB) *Server {
	tb.Helper()
	exe, err := Find()
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%v (CI runs the Temporal tests; scripts/test installs it)", err)
		}
		tb.Skipf("%v", err)
	}
	// BROOD_TEMPORAL_DB_DIR (a benchmark's choice: /dev/shm) keeps its
	// state off a disk other processes load.
	dir, err := os.MkdirTemp(os.Getenv("BROOD_TEMPORAL_DB_DIR"), "brood-temporal-")
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{tb: tb, exe: exe, DB: filepath.Join(dir, "temporal.db"), log: &bytes.Buffer{}}
	s.startOnFreePort()
	return s
}

// serverEnv is the server's environment: env with GOMAXPROCS=1, as
// docs/scale-out.md has users start theirs, or procs (the benchmarks'
// BROOD_TEMPORAL_GOMAXPROCS) when set; "0" leaves Go's default, one per
// core. A dev server's writes go through one SQLite connection one at a
// time, and a call's requests pass between its services' goroutines:
// with a second P a goroutine made ready may wake another thread, which
// spins looking for work before it sleeps again. On one P it switched
// threads 39% less often over the 300-call fleet benchmark and took 12%
// less CPU (docs/performance.md, issue 26).
func serverEnv(env []string, procs string) []string {
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "GOMAXPROCS=") })
	switch procs {
	case "":
		return append(env, "GOMAXPROCS=1")
	case "0":
		return env
	}
	return append(env, "GOMAXPROCS="+procs)
}

// Pid is the server process's id (0 when it is not running): a
// benchmark reads its CPU time from /proc.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}
