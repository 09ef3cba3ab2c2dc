package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Fork copies the transcript at src to a new file dst (Claude Code's
// --fork-session): the whole records of src, a torn last line left out,
// so the copy continues the same conversation while src is left as it
// was. dst must not exist (it is created exclusively: a fork never
// writes into another session), and a src that is not a regular file
// (a link, a device) is refused.
func Fork(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("session: %s is not a regular file", src)
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	defer in.Close()
	b, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	b = b[:bytes.LastIndexByte(b, '\n')+1] // whole lines only
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	_, werr := out.Write(b)
	if err := errors.Join(werr, out.Close()); err != nil {
		_ = os.Remove(dst)
		return fmt.Errorf("session: %w", err)
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		claimFirst(dst, b[:i+1]) // the copy's first line is its owner record's
	}
	return nil
}
