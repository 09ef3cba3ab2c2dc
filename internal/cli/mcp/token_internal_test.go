package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadTokenChecksTheOpenFile: a token file is opened once, never
// through a link, and checked on what was opened: a link, a FIFO (which
// would block a plain open), a file others may read, a file of another
// user (as root) and a short token are refused, each naming the file and
// what to do; a private file of one's own is read.
func TestReadTokenChecksTheOpenFile(t *testing.T) {
	const good = "0123456789abcdef0123456789abcdef"
	dir := t.TempDir()
	mk := func(name, body string, perm os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil {
			t.Fatal(err)
		}
		return p
	}
	own := mk("own.token", good+"\n", 0o600)
	link := filepath.Join(dir, "link.token")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.token")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	other := mk("other.token", good, 0o600)
	otherWant := ""
	if os.Getuid() == 0 {
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		otherWant = "not by you"
	}
	for _, tc := range []struct {
		name, path, want string // want: "" reads good, else a part of the error
	}{
		{"own", own, ""},
		{"link", link, "a symbolic link"},
		{"fifo", fifo, "not a regular file"},
		{"group-readable", mk("wide.token", good, 0o640), "chmod 600"},
		{"short", mk("short.token", "abc", 0o600), "at least 16"},
		{"another user's", other, otherWant},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := readToken(tc.path)
			if tc.want == "" {
				if err != nil || v != good {
					t.Fatalf("readToken = %q, %v; want the token", v, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Fatalf("readToken = %q, %v; want an error naming %s with %q", v, err, tc.path, tc.want)
			}
		})
	}
}
