package dirents

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestListLinkSwappedForDir (review24 P3-1): a link getdents listed that
// is a directory by the time its target is read is kept as a directory
// (walked), not dropped with what is below it.
func TestListLinkSwappedForDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/etc", filepath.Join(dir, "x")); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	buf := make([]byte, 4096)
	n, err := syscall.Getdents(fd, buf)
	if err != nil {
		t.Fatal(err)
	}
	// The swap, between the listing and the readlinkat.
	if err := os.Remove(filepath.Join(dir, "x")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := appendEntries(nil, fd, buf[:n], nil, true)
	if err != nil || len(ents) != 1 || ents[0] != (Entry{Name: "x", Dir: true}) {
		t.Errorf("appendEntries = %+v, %v; want x as a directory", ents, err)
	}
}
