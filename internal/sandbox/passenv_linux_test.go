package sandbox

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// passProbeEnv makes the test binary a child that takes passedVar
// (TakeEnv) and prints what it got: "ok LEN SHA256 LEFT" (LEFT: the
// descriptors and entries it still holds of it) or "err MESSAGE".
const (
	passProbeEnv = "BROOD_TEST_PASS_PROBE"
	passedVar    = "BROOD_TEST_PASSED"
)

func passProbeChild() int {
	v, ok, err := TakeEnv(passedVar)
	if err != nil {
		fmt.Println("err", err)
		return 0
	}
	left := passedLeft()
	if _, still := os.LookupEnv(passedVar); still {
		left = append(left, "env")
	}
	fmt.Printf("ok %v %d %x %q\n", ok, len(v), sha256.Sum256([]byte(v)), strings.Join(left, ","))
	return 0
}

// passedLeft lists this process's descriptors on a memory file PassEnv
// makes.
func passedLeft() []string {
	var left []string
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.Contains(l, passedName) {
			left = append(left, e.Name())
		}
	}
	return left
}

// TestPassEnvReachesTheChild (review39/40 P2-C): a value of any size
// reaches a real child whole, a long one (past what one environment
// string may hold, 128 KiB) in a sealed memory file; the child keeps
// neither the entry nor the descriptor once it took it, and the parent
// closes its copy once the child started. A descriptor the entry names
// that is not a sealed memory file of brood's is refused.
func TestPassEnvReachesTheChild(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("/fixtures/client-certificate-for-mutual-tls.pem,", 6000) // ~290 KiB
	other, err := os.Create(filepath.Join(t.TempDir(), "plain"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.WriteString(long)
	for _, tc := range []struct {
		name, value string
		files       int // descriptors PassEnv adds
		forge       func(cmd *exec.Cmd)
		wantErr     string
	}{
		{name: "short, in the environment", value: `{"hidden":["/h/.ssh"]}`},
		{name: "long, in a memory file", value: long, files: 1},
		{name: "empty", value: ""},
		{name: "an entry naming a plain file", forge: func(cmd *exec.Cmd) {
			cmd.ExtraFiles = append(cmd.ExtraFiles, other)
			cmd.Env = append(cmd.Env, passedVar+"="+passedPrefix+"3")
		}, wantErr: "not a memory file from the parent"},
		{name: "an entry naming an unsealed memory file", forge: func(cmd *exec.Cmd) {
			fd, err := unix.MemfdCreate(passedName, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
			if err != nil {
				t.Fatal(err)
			}
			f := os.NewFile(uintptr(fd), passedName)
			f.WriteString(long)
			cmd.ExtraFiles = append(cmd.ExtraFiles, f)
			cmd.Env = append(cmd.Env, passedVar+"="+passedPrefix+"3")
		}, wantErr: "not a sealed memory file"},
		{name: "an entry naming no descriptor", forge: func(cmd *exec.Cmd) {
			cmd.Env = append(cmd.Env, passedVar+"="+passedPrefix+"x")
		}, wantErr: "does not name a descriptor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), passProbeEnv+"=1")
			if tc.forge != nil {
				tc.forge(cmd)
			} else {
				if err := PassEnv(cmd, passedVar, []byte(tc.value)); err != nil {
					t.Fatal(err)
				}
				if len(cmd.ExtraFiles) != tc.files {
					t.Fatalf("PassEnv gave %d descriptors for %d bytes, want %d", len(cmd.ExtraFiles), len(tc.value), tc.files)
				}
				if got, ok, err := PassedEnv(cmd, passedVar); err != nil || !ok || got != tc.value {
					t.Fatalf("PassedEnv read back %d bytes, ok %v, err %v; want the %d passed", len(got), ok, err, len(tc.value))
				}
			}
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatalf("start the child: %v", err)
			}
			ClosePassed(cmd)
			if left := passedLeft(); tc.forge == nil && len(left) > 0 {
				t.Errorf("the parent still holds the memory file after the start (descriptors %v)", left)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("the child: %v\n%s", err, out.String())
			}
			got := strings.TrimSpace(out.String())
			if tc.wantErr != "" {
				if !strings.HasPrefix(got, "err ") || !strings.Contains(got, tc.wantErr) {
					t.Errorf("the child took a forged entry: %q, want an error saying %q", got, tc.wantErr)
				}
				return
			}
			want := fmt.Sprintf("ok true %d %x %q", len(tc.value), sha256.Sum256([]byte(tc.value)), "")
			if got != want {
				t.Errorf("the child got %q\nwant         %q", got, want)
			}
		})
	}
}

// TestPassEnvSealed: once PassEnv made it, what the memory file holds
// cannot change, through the parent's descriptor or a new one opened on
// it through /proc (a process that reaches it between the parent's write
// and the child's read).
func TestPassEnvSealed(t *testing.T) {
	cmd := exec.Command("true")
	if err := PassEnv(cmd, passedVar, []byte(strings.Repeat("x", passInEnvMax+1))); err != nil {
		t.Fatal(err)
	}
	defer ClosePassed(cmd)
	f := cmd.ExtraFiles[0]
	reopened, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	for _, tc := range []struct {
		name  string
		write func() error
	}{
		{"write", func() error { _, err := f.WriteAt([]byte("y"), 0); return err }},
		{"write reopened", func() error { _, err := reopened.WriteAt([]byte("y"), 0); return err }},
		{"append", func() error { _, err := reopened.WriteAt([]byte("y"), passInEnvMax+1); return err }},
		{"truncate", func() error { return reopened.Truncate(1) }},
		{"unseal", func() error {
			_, err := unix.FcntlInt(reopened.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_FUTURE_WRITE)
			return err
		}},
	} {
		if err := tc.write(); err == nil {
			t.Errorf("%s: the sealed memory file changed", tc.name)
		}
	}
	if v, ok, err := PassedEnv(cmd, passedVar); err != nil || !ok || v != strings.Repeat("x", passInEnvMax+1) {
		t.Errorf("PassedEnv: %d bytes, ok %v, err %v", len(v), ok, err)
	}
}

// TestPassSealedNeverInTheEnvironment: PassSealed puts even a short value
// in a sealed memory file (the environment only names its descriptor), as
// the .env values a child redacts must never be in its environment.
func TestPassSealedNeverInTheEnvironment(t *testing.T) {
	cmd := exec.Command("true")
	if err := PassSealed(cmd, passedVar, []byte("short-secret")); err != nil {
		t.Fatal(err)
	}
	defer ClosePassed(cmd)
	if len(cmd.ExtraFiles) != 1 || strings.Contains(strings.Join(cmd.Env, "\n"), "short-secret") {
		t.Fatalf("env %q, %d files: want the value in one memory file", cmd.Env, len(cmd.ExtraFiles))
	}
	if v, ok, err := PassedEnv(cmd, passedVar); err != nil || !ok || v != "short-secret" {
		t.Errorf("PassedEnv: %q, ok %v, err %v", v, ok, err)
	}
}
