package temporal

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestKeyIsNeverReplacedByASecondFirstStart: a key written where another
// process made one meanwhile is refused (fs.ErrExist), the first kept;
// workers of one account starting together all end up with the one key
// the file holds.
func TestKeyIsNeverReplacedByASecondFirstStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, WorkerKeyFile)
	if err := writePrivate(path, []byte("first"), false); err != nil {
		t.Fatal(err)
	}
	if err := writePrivate(path, []byte("second"), false); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a second key written over the first: %v; want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Fatalf("the key file holds %q; want the first key kept", b)
	}
	if err := writePrivate(path, []byte("forced"), true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "forced" {
		t.Fatalf("keygen --force left %q", b)
	}

	fleet := filepath.Join(t.TempDir(), "fleet")
	const n = 8
	keys := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, _, err := LoadWorkerKey(fleet, "w@host")
			if err != nil {
				t.Errorf("start %d: %v", i, err)
				return
			}
			keys[i] = s.Public()
		})
	}
	wg.Wait()
	kept, err := LoadSigner(filepath.Join(fleet, WorkerKeyFile))
	if err != nil || kept == nil {
		t.Fatalf("the key file: %v", err)
	}
	for i, k := range keys {
		if k != kept.Public() {
			t.Errorf("start %d signs with %s; the file keeps %s", i, k, kept.Public())
		}
	}
}

// TestTrustedKeyFilesOthersCanWriteAreRefused: trusted_workers and
// trusted_keys are read only when no other account can change them: the
// file or its directory writable by group or others is refused with the
// chmod to run.
func TestTrustedKeyFilesOthersCanWriteAreRefused(t *testing.T) {
	line := seeded(4).Public() + "\n"
	for _, tc := range []struct {
		name           string
		file, dir      os.FileMode
		want           string // "" : read
		sticky         bool
		trustedWorkers bool
	}{
		{"private", 0o600, 0o700, "", false, true},
		{"readable by all", 0o644, 0o755, "", false, false},
		{"group-writable file", 0o664, 0o755, "trusted_workers: writable by group or others (mode -rw-rw-r--), who could add a key this worker trusts: chmod go-w ", false, true},
		{"world-writable file", 0o646, 0o755, "trusted_keys: writable by group or others", false, false},
		{"group-writable directory", 0o600, 0o775, "writable by group or others (mode -rwxrwxr-x), who could add a key this worker trusts: chmod go-w ", false, true},
		{"sticky world-writable directory", 0o600, 0o777, "", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "fleet")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			name := TrustedKeysFile
			if tc.trustedWorkers {
				name = TrustedWorkersFile
			}
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
				t.Fatal(err)
			}
			mode := tc.dir
			if tc.sticky {
				mode |= os.ModeSticky
			}
			if err := os.Chmod(path, tc.file); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, mode); err != nil {
				t.Fatal(err)
			}
			var err error
			if tc.trustedWorkers {
				_, err = TrustWorkers(dir, nil)
			} else {
				err = NewTrust().AddFile(path)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
				t.Fatalf("err %v; want one line saying %q", err, tc.want)
			}
		})
	}
}
