package depth

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReadProc: readProc reads a file whole, or up to the chunk holding
// its first NUL, growing its buffer past what it was given.
func TestReadProc(t *testing.T) {
	long := strings.Repeat("a", 3000)
	for _, c := range []struct {
		name, data string
		firstField bool
		want       string // a prefix of what is read (all of it: firstField false)
	}{
		{"empty", "", false, ""},
		{"short", "12 (sh) S 1 2", false, "12 (sh) S 1 2"},
		{"longer than the buffer", long, false, long},
		{"first field", "brood-X-d1-m3\x00--envelope\x00x\x00", true, "brood-X-d1-m3\x00"},
		{"first field past the buffer", long + "\x00rest", true, long + "\x00"},
		{"no NUL at all", long, true, long},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(p, []byte(c.data), 0o644); err != nil {
				t.Fatal(err)
			}
			var buf [256]byte
			got, ok := readProc(p, buf[:0], c.firstField)
			if !ok || !bytes.HasPrefix(got, []byte(c.want)) || (!c.firstField && string(got) != c.data) {
				t.Fatalf("readProc = %q (%d bytes), %v; want %q first", got[:min(len(got), 40)], len(got), ok, c.want[:min(len(c.want), 40)])
			}
		})
	}
	if _, ok := readProc(filepath.Join(t.TempDir(), "missing"), nil, false); ok {
		t.Fatal("readProc of a missing file succeeded")
	}
}

// TestOwnProcess: this process's parent and argv[0] read through /proc are
// what the os package says.
func TestOwnProcess(t *testing.T) {
	if got, want := parentOf("self"), os.Getppid(); got != want {
		t.Errorf("parentOf(self) = %d, want %d", got, want)
	}
	if got := Argv0(os.Getpid()); got != os.Args[0] {
		t.Errorf("Argv0(self) = %q, want %q", got, os.Args[0])
	}
	if got := argv0(strconv.Itoa(1 << 30)); got != "" {
		t.Errorf("argv0 of no process = %q", got)
	}
}
