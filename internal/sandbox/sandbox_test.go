//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/sandbox/sandboxtest"
)

// childEnv, when set, makes the test binary act as a sandboxed child: it
// calls Restrict with the JSON policy in the variable, then runs the
// command in childCmdEnv and prints its Status as JSON on stdout.
const (
	childEnv    = "SANDBOX_TEST_CHILD_POLICY"
	childCmdEnv = "SANDBOX_TEST_CHILD_CMD"
)

func TestMain(m *testing.M) {
	if mode, ok := os.LookupEnv(dropBenchEnv); ok {
		os.Exit(dropBenchChild(mode))
	}
	if _, ok := os.LookupEnv(tsyncConflictEnv); ok {
		os.Exit(tsyncConflictChild())
	}
	if pid, ok := os.LookupEnv(othersEnv); ok {
		os.Exit(othersCheck(pid))
	}
	if pol, ok := os.LookupEnv(childEnv); ok {
		os.Exit(runChild(pol))
	}
	if _, ok := os.LookupEnv(passProbeEnv); ok {
		os.Exit(passProbeChild())
	}
	if _, ok := os.LookupEnv(reaperEnv); ok {
		os.Exit(reaperChild()) // reap_linux_test.go
	}
	os.Exit(m.Run())
}

func runChild(pol string) int {
	var p Policy
	if err := json.Unmarshal([]byte(pol), &p); err != nil {
		fmt.Fprintln(os.Stderr, "bad policy:", err)
		return 90
	}
	inPlace := allThreads
	if os.Getenv(forceReexecEnv) != "" {
		inPlace = func(int, Policy) (bool, error) { return false, unix.ENOTSUP } // as in a binary with cgo
	}
	if os.Getenv(mountFirstEnv) != "" && os.Getenv(enforcedEnv) == "" {
		// As an overlay child: mount first, inside the base domain (once:
		// not again in the image a re-exec starts).
		err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
		if err == nil {
			err = unix.Mount("tmpfs", os.Getenv(mountFirstEnv), "tmpfs", 0, "")
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mount before restrict:", err)
			return 94
		}
	}
	release := make(chan struct{})
	if os.Getenv(childCmdEnv) == "caps" {
		parkThreads(parkedThreads, release)
	}
	st, err := restrictWith(p, childABI(), inPlace)
	if err != nil {
		fmt.Fprintln(os.Stderr, "restrict:", err)
		return 91
	}
	out, _ := json.Marshal(st)
	fmt.Println(string(out))
	cmdline := os.Getenv(childCmdEnv)
	if strings.HasPrefix(cmdline, "dial ") {
		c, err := net.Dial("tcp", strings.TrimPrefix(cmdline, "dial "))
		if err != nil {
			fmt.Fprintln(os.Stderr, "dial:", err)
			return 1
		}
		c.Close()
		return 0
	}
	if cmdline == "caps" {
		return capsCheck(release)
	}
	if cmdline == "exit" {
		// Restrict alone, nothing started after it: what
		// BenchmarkStartCost's confine case times (Restrict leaves
		// nothing running once it returns).
		return 0
	}
	if cmdline == "mapped" {
		return mappedCheck()
	}
	if strings.HasPrefix(cmdline, "threads ") {
		return threadsCheck(strings.Fields(cmdline)[1:])
	}
	if strings.HasPrefix(cmdline, "modes ") {
		return modesCheck(strings.TrimPrefix(cmdline, "modes "))
	}
	if strings.HasPrefix(cmdline, "others ") {
		return othersCommand(strings.TrimPrefix(cmdline, "others "))
	}
	if strings.HasPrefix(cmdline, "raw ") {
		return rawCheck(strings.Fields(cmdline)[1:])
	}
	if cmdline == "interfaces" {
		ifs, _ := net.Interfaces()
		for _, i := range ifs {
			fmt.Fprintln(os.Stderr, "iface", i.Name)
		}
		return len(ifs)
	}
	cmd := exec.Command("bash", "-c", cmdline)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 92
	}
	return 0
}

type childResult struct {
	status Status
	code   int
	stderr string
}

func startChild(t *testing.T, p Policy, command string, configure func(*exec.Cmd)) childResult {
	t.Helper()
	pol, _ := json.Marshal(p)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(pol), childCmdEnv+"="+command)
	if configure != nil {
		configure(cmd)
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return childResultOf(t, cmd.Run(), stdout.String(), stderr.String())
}

// childResultOf is what a test child that ran (err from its Run or Wait)
// reported: its exit code, stderr and the status line it printed.
func childResultOf(t testing.TB, err error, stdout, stderr string) childResult {
	t.Helper()
	res := childResult{stderr: stderr}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run child: %v", err)
	}
	if res.code >= 90 {
		t.Fatalf("child infrastructure failure %d: %s", res.code, res.stderr)
	}
	line, _, _ := strings.Cut(stdout, "\n")
	if err := json.Unmarshal([]byte(line), &res.status); err != nil {
		t.Fatalf("child status %q: %v (stderr %s)", line, err, res.stderr)
	}
	return res
}

func TestReadOnlyChildCannotWrite(t *testing.T) {
	abi := landlockABI()
	if abi == 0 {
		t.Skip("kernel has no Landlock; TestRestrictWithoutLandlock covers the fallback")
	}
	tree := t.TempDir()
	scratch := t.TempDir()
	if err := os.WriteFile(filepath.Join(tree, "existing"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		policy   Policy
		command  string
		wantOK   bool
		wantFile string // must (wantOK) or must not exist afterwards
	}{
		{"redirect denied", Policy{ReadOnly: true, Writable: []string{scratch}}, "echo x > " + tree + "/file", false, tree + "/file"},
		{"nested bash denied", Policy{ReadOnly: true}, "bash -c 'echo x > " + tree + "/nested'", false, tree + "/nested"},
		{"truncate denied", Policy{ReadOnly: true}, ": > " + tree + "/existing", false, ""},
		{"remove denied", Policy{ReadOnly: true}, "rm " + tree + "/existing", false, ""},
		{"mkdir denied", Policy{ReadOnly: true}, "mkdir " + tree + "/d", false, tree + "/d"},
		{"scratch allowed", Policy{ReadOnly: true, Writable: []string{scratch}}, "echo x > " + scratch + "/ok", true, scratch + "/ok"},
		{"dev null allowed", Policy{ReadOnly: true}, "echo x > /dev/null && cat " + tree + "/existing", true, ""},
		{"writer confined to its copy", Policy{Writable: []string{scratch}}, "echo x > " + tree + "/out", false, tree + "/out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := startChild(t, tt.policy, tt.command, nil)
			if res.status.Mechanism != "landlock" || res.status.ABI != abi {
				t.Fatalf("status = %v, want landlock abi %d", res.status, abi)
			}
			if got := res.code == 0; got != tt.wantOK {
				t.Fatalf("exit %d, want success=%v; stderr: %s", res.code, tt.wantOK, res.stderr)
			}
			if !tt.wantOK && !strings.Contains(res.stderr, "Permission denied") {
				t.Errorf("stderr %q does not show the sandbox's denial", res.stderr)
			}
			if tt.wantFile != "" {
				_, err := os.Stat(tt.wantFile)
				if exists := err == nil; exists != tt.wantOK {
					t.Errorf("%s exists=%v, want %v", tt.wantFile, exists, tt.wantOK)
				}
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(tree, "existing")); err != nil || string(b) != "keep\n" {
		t.Errorf("existing file changed: %q %v", b, err)
	}
}

func TestRestrictWithoutLandlock(t *testing.T) {
	tests := []struct {
		name string
		p    Policy
		want string
	}{
		{"read-only asked", Policy{ReadOnly: true}, "unavailable"},
		{"writer confined", Policy{Writable: []string{t.TempDir()}}, "unavailable"},
		{"nothing asked", Policy{Network: true}, "none"},
		{"network off only", Policy{}, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := restrictWith(tt.p, 0, allThreads)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mechanism != tt.want {
				t.Errorf("mechanism = %q, want %q", st.Mechanism, tt.want)
			}
			if tt.want == "unavailable" && !strings.Contains(st.String(), "tool layer") {
				t.Errorf("status %q should say who enforces read-only", st)
			}
		})
	}
}

func TestNetworkNamespace(t *testing.T) {
	rep := Probe(context.Background())
	cmdConf := func(cmd *exec.Cmd) {
		if err := ConfigureNetwork(cmd, rep); err != nil {
			t.Fatal(err)
		}
	}
	if !rep.NetNS {
		cmd := exec.Command("true")
		if err := ConfigureNetwork(cmd, rep); err == nil {
			t.Fatal("ConfigureNetwork must refuse where the probe found no network namespace")
		}
		return
	}
	res := startChild(t, Policy{Network: true}, "interfaces", cmdConf)
	if res.code != 1 || !strings.Contains(res.stderr, "iface lo") {
		t.Errorf("child in its own netns sees %d interfaces: %s", res.code, res.stderr)
	}
}

func TestLandlockDeniesTCP(t *testing.T) {
	if landlockABI() < 4 {
		t.Skip("kernel Landlock ABI < 4 has no network rules; the namespace test covers network: false")
	}
	ln := sandboxtest.Greet(t, "tcp", "127.0.0.1:0", "")
	tests := []struct {
		network bool
		wantOK  bool
	}{{true, true}, {false, false}}
	for _, tt := range tests {
		t.Run(fmt.Sprint("network=", tt.network), func(t *testing.T) {
			res := startChild(t, Policy{ReadOnly: true, Network: tt.network}, "dial "+ln.Addr().String(), nil)
			if (res.code == 0) != tt.wantOK {
				t.Fatalf("dial exit %d, want ok=%v: %s", res.code, tt.wantOK, res.stderr)
			}
			if !tt.wantOK && (!res.status.NetworkTCP || !strings.Contains(res.stderr, "permission denied")) {
				t.Errorf("status %v, stderr %q: want a Landlock TCP denial", res.status, res.stderr)
			}
		})
	}
}

func TestStatusString(t *testing.T) {
	tests := []struct {
		s    Status
		want string
	}{
		{Status{Mechanism: "landlock", ABI: 7, NetworkTCP: true}, "landlock (abi 7), tcp denied"},
		{Status{Mechanism: "unavailable", Note: "no kernel support"}, "unavailable: no kernel support"},
		{Status{Mechanism: "none"}, "none"},
	}
	for _, tt := range tests {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestProbeMatchesKernel(t *testing.T) {
	rep := Probe(context.Background())
	if rep.LandlockABI != landlockABI() {
		t.Errorf("probe ABI %d, kernel says %d", rep.LandlockABI, landlockABI())
	}
	if rep.HoldsBashReadOnly() != (rep.LandlockABI > 0) {
		t.Errorf("HoldsBashReadOnly inconsistent with ABI %d", rep.LandlockABI)
	}
	// The probe must agree with an actual attempt to start a process in a
	// user namespace.
	cmd := exec.Command("true")
	AddNamespaces(cmd, 0x10000000, nil) // CLONE_NEWUSER
	if err := cmd.Run(); (err == nil) != rep.UserNS {
		t.Errorf("probe says userns=%v, direct attempt err=%v", rep.UserNS, err)
	}
}

// TestReadOnlyChildCannotChangeMetadata is issue 10 case 7 at the sandbox:
// Landlock does not cover chmod, chown, utimes or xattrs; the syscall filter
// of a read-only child does.
func TestReadOnlyChildCannotChangeMetadata(t *testing.T) {
	if landlockABI() == 0 {
		t.Skip("kernel has no Landlock; read-only agents get no Bash there")
	}
	if _, ok := metadataFilter(); !ok {
		t.Skip("no syscall table for this architecture; the Status says so (TestMetadataStatus)")
	}
	tree := t.TempDir()
	file := filepath.Join(tree, "existing")
	if err := os.WriteFile(file, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, command string }{
		{"chmod", "chmod +x " + file},
		{"touch -d", "touch -d 2001-01-01 " + file},
		{"chown", "chown $(id -u):$(id -g) " + file},
		{"python os.utime", "python3 -c 'import os; os.utime(\"" + file + "\", (0, 0))' 2>/dev/null || perl -e 'utime(0, 0, \"" + file + "\") or exit 1'"},
		{"setfattr", "python3 -c 'import os; os.setxattr(\"" + file + "\", \"user.x\", b\"1\")'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := startChild(t, Policy{ReadOnly: true}, tt.command, nil)
			if res.code == 0 {
				t.Fatalf("%s succeeded under the read-only sandbox", tt.command)
			}
			if res.status.Metadata != metadataNote {
				t.Errorf("status %v does not name the metadata filter", res.status)
			}
		})
	}
	after, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("metadata changed: %v %v -> %v %v", before.Mode(), before.ModTime(), after.Mode(), after.ModTime())
	}
	// A writer confined to its copy keeps chmod there (and is not filtered).
	scratch := t.TempDir()
	res := startChild(t, Policy{Writable: []string{scratch}}, "touch "+scratch+"/x && chmod +x "+scratch+"/x", nil)
	if res.code != 0 || res.status.Metadata != "" {
		t.Errorf("writer: exit %d status %v: %s", res.code, res.status, res.stderr)
	}
}

// TestScopeForChild: a process started from a scoped thread cannot signal
// the process that started it, and can signal itself.
func TestScopeForChild(t *testing.T) {
	if landlockABI() < 6 {
		t.Skip("kernel Landlock ABI < 6 has no signal scoping; brood doctor says so")
	}
	errc := make(chan error, 1)
	var out []byte
	OnThrowawayThread(func() {
		ok, err := ScopeForChild()
		if err != nil || !ok {
			errc <- fmt.Errorf("ScopeForChild: %v %v", ok, err)
			return
		}
		cmd := exec.Command("sh", "-c", fmt.Sprintf("kill -0 $$ && echo self-ok; kill -0 %d 2>&1 || echo parent-denied", os.Getpid()))
		out, err = cmd.CombinedOutput()
		errc <- err
	})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "self-ok") || !strings.Contains(string(out), "parent-denied") {
		t.Errorf("scoped child: %s", out)
	}
}
