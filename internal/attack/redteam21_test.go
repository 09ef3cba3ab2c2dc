package attack_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hostProbeEnv makes the test binary run one of red team 21's probes
// (hostProbe) from a child's Bash: "ipc KEY", "pts", "keys".
const hostProbeEnv = "BROOD_ATTACK_HOST_PROBE"

// hostProbe is what a hostile child runs against what the host shares
// with it, printing what it reached.
func hostProbe(arg string) int {
	kind, rest, _ := strings.Cut(arg, " ")
	switch kind {
	case "ipc":
		key, _ := strconv.ParseInt(rest, 0, 64)
		ipcProbe(int(key))
	case "pts":
		ptsProbe()
	case "keys":
		keysProbe()
	}
	fmt.Println("host-probed")
	return 0
}

// ipcProbe reads and writes the host's System V segment key, and makes a
// segment (key+1) and a message queue (key+2) to outlive it.
func ipcProbe(key int) {
	if id, err := unix.SysvShmGet(key, 0, 0); err != nil {
		fmt.Println("shmget:", err)
	} else if b, err := unix.SysvShmAttach(id, 0, 0); err != nil {
		fmt.Println("shmat:", err)
	} else {
		fmt.Printf("SHM-READ %s\n", bytes.TrimRight(b[:32], "\x00"))
		copy(b, "CHILD-WROTE\x00")
		_ = unix.SysvShmDetach(b)
	}
	if _, err := unix.SysvShmGet(key+1, 1<<20, unix.IPC_CREAT|0o666); err == nil {
		fmt.Println("SHM-MADE")
	} else {
		fmt.Println("shmget create:", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_MSGGET, uintptr(key+2), unix.IPC_CREAT|0o666, 0); e == 0 {
		fmt.Println("MSG-MADE")
	} else {
		fmt.Println("msgget create:", e)
	}
}

// ptsProbe opens, read-only, every terminal it finds and the consoles.
func ptsProbe() {
	names, _ := filepath.Glob("/dev/pts/*")
	names = append(names, "/dev/console", "/dev/tty0", "/dev/tty1", "/dev/ttyS0", "/dev/mem", "/dev/kmsg")
	for _, n := range names {
		if n == "/dev/pts/ptmx" {
			continue
		}
		fd, err := unix.Open(n, unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
			fmt.Println("DEV-OPENED", n)
		}
	}
	for _, n := range []string{"/dev/null", "/dev/zero", "/dev/urandom", "/dev/full", "/dev/random"} {
		f, err := os.Open(n)
		if err == nil {
			_, err = f.Read(make([]byte, 8))
			f.Close()
		}
		if err != nil && !(n == "/dev/null" && err.Error() == "EOF") {
			fmt.Println("DEV-REFUSED", n, err)
		}
	}
}

// keysProbe reads the key the test put in its session keyring and plants
// one of its own there.
func keysProbe() {
	typ, desc := []byte("user\x00"), []byte("brood-attack-session\x00")
	session := int32(unix.KEY_SPEC_SESSION_KEYRING)
	id, _, e := unix.Syscall6(unix.SYS_KEYCTL, unix.KEYCTL_SEARCH, uintptr(uint32(session)),
		uintptr(unsafe.Pointer(&typ[0])), uintptr(unsafe.Pointer(&desc[0])), 0, 0)
	if e != 0 {
		fmt.Println("keyctl search:", e)
	} else {
		buf := make([]byte, 64)
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, int(id), buf, 0)
		fmt.Printf("KEY-READ %q %v\n", buf[:max(0, min(n, len(buf)))], err)
	}
	plant, val := []byte("brood-attack-planted\x00"), []byte("CHILD")
	if _, _, e := unix.Syscall6(unix.SYS_ADD_KEY, uintptr(unsafe.Pointer(&typ[0])), uintptr(unsafe.Pointer(&plant[0])),
		uintptr(unsafe.Pointer(&val[0])), uintptr(len(val)), uintptr(uint32(session)), 0); e == 0 {
		fmt.Println("KEY-PLANTED")
	} else {
		fmt.Println("add_key:", e)
	}
}

// exploreProbe runs brood with a root that hands an explore child (read
// only, no network) the Bash command cmd, and returns the child's result
// (what the command printed); a run that fails fails the test.
func (p *project) exploreProbe(cmd string) string {
	p.t.Helper()
	res, err := p.exploreProbeErr(cmd)
	if err != nil {
		p.t.Fatal(err)
	}
	return res
}

// exploreProbeErr is exploreProbe for a goroutine other than the test's:
// a failed run is its error.
func (p *project) exploreProbeErr(cmd string) (string, error) {
	mdl := p.script("probe21.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: probe, prompt: "probe"}
    - say: "root done"
  explore:
    - tools:
        - Bash: {command: `+strconv.Quote(cmd)+`}
    - say: "PROBE {{result 0}}"
`)
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	c := exec.CommandContext(p.t.Context(), exe, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	c.Dir, c.Env = p.root, p.Env
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil || !strings.Contains(out.String(), "root done") {
		return "", fmt.Errorf("run: %v\n%s\n%s", err, out.String(), errb.String())
	}
	res := p.taskResult(p.t)
	if !strings.Contains(res, "probed") {
		return "", fmt.Errorf("the explore child's probe did not run:\n%s\n%s", res, errb.String())
	}
	return res, nil
}

// probeCmd is the Bash command that runs the test binary's probe arg.
func probeCmd(t *testing.T, arg string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s=%s %s; echo probed", hostProbeEnv, strconv.Quote(arg), strconv.Quote(exe))
}

// TestChildSharesNoSysVIPC (red team 21 P1-3): a read-only child neither
// reads nor writes the host's System V shared memory of its uid, and the
// segment and message queue it makes do not outlive it (each child has an
// IPC namespace of its own, or, where none can be made, no System V IPC).
func TestChildSharesNoSysVIPC(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# r\n"})
	key := 0x21b00000 | (os.Getpid()&0xffff)<<4
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	if err != nil {
		t.Fatalf("make the host's segment: %v", err)
	}
	t.Cleanup(func() {
		_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		if id, err := unix.SysvShmGet(key+1, 0, 0); err == nil {
			_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		}
		if q, _, e := unix.Syscall(unix.SYS_MSGGET, uintptr(key+2), 0, 0); e == 0 {
			_, _, _ = unix.Syscall(unix.SYS_MSGCTL, q, unix.IPC_RMID, 0)
		}
	})
	b, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.SysvShmDetach(b)
	copy(b, "HOST-SHM-SECRET\x00")
	res := p.exploreProbe(probeCmd(t, fmt.Sprintf("ipc %#x", key)))
	if strings.Contains(res, "HOST-SHM-SECRET") || strings.Contains(res, "SHM-READ") {
		t.Errorf("the child read the host's segment:\n%s", res)
	}
	if got := string(bytes.TrimRight(b[:32], "\x00")); got != "HOST-SHM-SECRET" {
		t.Errorf("the child wrote the host's segment: it holds %q", got)
	}
	if _, err := unix.SysvShmGet(key+1, 0, 0); err == nil {
		t.Errorf("a segment the child made outlives it:\n%s", res)
	}
	if _, _, e := unix.Syscall(unix.SYS_MSGGET, uintptr(key+2), 0, 0); e == 0 {
		t.Errorf("a message queue the child made outlives it:\n%s", res)
	}
}

// TestChildOpensNoOtherTerminal (red team 21 P1-4): a read-only child
// opens no terminal of the user's (a pty another shell reads keystrokes
// from, sudo's and ssh's passwords) nor a console, and still reads
// /dev/null, /dev/zero and /dev/urandom.
func TestChildOpensNoOtherTerminal(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# r\n"})
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pty to open here: %v", err)
	}
	defer master.Close()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts := "/dev/pts/" + strconv.Itoa(n)
	if fd, err := unix.Open(pts, unix.O_RDONLY|unix.O_NOCTTY, 0); err != nil {
		t.Skipf("this process cannot open its own %s: %v", pts, err)
	} else {
		unix.Close(fd)
	}
	res := p.exploreProbe(probeCmd(t, "pts"))
	if strings.Contains(res, "DEV-OPENED") {
		t.Errorf("the child opened a terminal (the user's is %s):\n%s", pts, res)
	}
	if strings.Contains(res, "DEV-REFUSED") {
		t.Errorf("the child may not read what every program needs:\n%s", res)
	}
}

// TestChildReachesNoSessionKeyring (red team 21 P2-3): a read-only child
// neither reads a key of the session keyring brood inherited from the
// user's shell nor adds one that outlives it.
func TestChildReachesNoSessionKeyring(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# r\n"})
	var res string
	var runErr error
	planted := make(chan error, 1)
	// A session keyring of this thread's alone, as a shell's login: brood
	// is started from it and the thread dies with the goroutine.
	go func() {
		runtime.LockOSThread()
		// (A NULL name: a new anonymous keyring.)
		if _, _, e := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); e != 0 {
			planted <- fmt.Errorf("join a session keyring: %w", e)
			return
		}
		if _, err := unix.AddKey("user", "brood-attack-session", []byte("SESSION-KEY-SECRET"), unix.KEY_SPEC_SESSION_KEYRING); err != nil {
			planted <- fmt.Errorf("add the session key: %w", err)
			return
		}
		res, runErr = p.exploreProbeErr(probeCmd(t, "keys"))
		_, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", "brood-attack-planted", 0)
		planted <- err
	}()
	err := <-planted
	if runErr != nil {
		t.Fatal(runErr)
	}
	if err == nil {
		t.Errorf("a key the child added to the session keyring outlives it:\n%s", res)
	} else if res == "" {
		t.Fatal(err)
	}
	if strings.Contains(res, "SESSION-KEY-SECRET") || strings.Contains(res, "KEY-PLANTED") {
		t.Errorf("the child reached the session keyring:\n%s", res)
	}
}

// TestChildReadsNoToolTokens (red team 21 P2-5): the stores of tools the
// hidden list missed (Hugging Face, glab, Gemini, Copilot, cloudflared,
// nix, Bundler, Kaggle, a snap browser's profile) are hidden from a read
// only child; the home's other files stay readable.
func TestChildReadsNoToolTokens(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# r\n"})
	stores := []string{
		".cache/huggingface/token", ".huggingface/token", ".config/glab-cli/config.yml",
		".gemini/oauth_creds.json", "snap/firefox/common/.mozilla/firefox/p/logins.json",
		".config/github-copilot/hosts.json", ".cloudflared/cert.pem", ".config/nix/nix.conf",
		".bundle/config", ".kaggle/kaggle.json",
	}
	var cats []string
	for i, rel := range stores {
		writeFile(t, filepath.Join(p.home, rel), fmt.Sprintf("TOOL-TOKEN-%d\n", i))
		cats = append(cats, strconv.Quote(filepath.Join(p.home, rel)))
	}
	writeFile(t, filepath.Join(p.home, "notes.txt"), "HOME-NOTES-VISIBLE\n")
	res := p.exploreProbe("cat " + strings.Join(cats, " ") + " 2>/dev/null; cat ~/notes.txt; echo probed")
	if !strings.Contains(res, "HOME-NOTES-VISIBLE") {
		t.Fatalf("the control (~/notes.txt) was not read: the probe proves nothing:\n%s", res)
	}
	if strings.Contains(res, "TOOL-TOKEN-") {
		t.Errorf("the child read a tool's token:\n%s", res)
	}
}

// TestRootBashReadsNoProviderKey (red team 21 P2-8): the root's own Bash
// reads neither the provider key the root was started with from
// /proc/$PPID/environ (its tools' environment leaves the key out, the
// root's /proc file kept it) nor the root's memory: the root is not
// dumpable, as no child is. The control: the same command reads a plain
// process's environ (one of the same uid, holding what the Bash holds).
func TestRootBashReadsNoProviderKey(t *testing.T) {
	p := newProject(t, map[string]string{"README.md": "# r\n"})
	const key = "sk-ant-api03-RT21ROOTKEYMARKER"
	// (With the capabilities the root's Bash holds: execSleeper.)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	control := exec.Command(exe)
	control.Env = append(os.Environ(), sleeperEnv+"="+uniqueSleep(), "CONTROL_VAR=RT21ROOTKEYMARKER")
	if err := control.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { control.Process.Kill(); control.Wait() })
	cmd := fmt.Sprintf("echo ENV-$(tr '\\0' '\\n' < /proc/$PPID/environ | grep -c RT21ROOTKEYMARKER); "+
		"(exec 3</proc/$PPID/mem) 2>/dev/null && echo MEM-OPENED; "+
		"echo CONTROL-$(tr '\\0' '\\n' < /proc/%d/environ | grep -c RT21ROOTKEYMARKER); echo probed", control.Process.Pid)
	mdl := p.script("rootkey.yaml", `agents:
  root:
    - tools:
        - Bash: {command: `+strconv.Quote(cmd)+`}
    - say: "root done"
`)
	code, out, errs := p.brood(t.Context(), []string{"ANTHROPIC_API_KEY=" + key}, "run", "--allow", "Bash", "--model", mdl, "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	var res string
	for _, r := range p.rootTranscript() {
		if r.Tool == "Bash" {
			res += r.Output
		}
	}
	if !strings.Contains(res, "probed") || !strings.Contains(res, "CONTROL-1") {
		t.Fatalf("the probe did not run, or did not read the control's environ (it proves nothing):\n%s\n%s", res, errs)
	}
	if !strings.Contains(res, "ENV-0") || strings.Contains(res, "MEM-OPENED") {
		t.Errorf("the root's Bash read the root's environ or opened its memory:\n%s", res)
	}
}
