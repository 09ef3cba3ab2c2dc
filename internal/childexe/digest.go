package childexe

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strings"
	"time"

	"github.com/broodhq/brood"
)

// DigestFlag is the one argument brood-child answers outside the child
// protocol: it prints the digest of the source it was built from.
const DigestFlag = "--source-digest"

// digestTimeout bounds asking a candidate for its digest (one exec, once
// per parent process; generous for a loaded machine).
const digestTimeout = 20 * time.Second

// SourceDigest is the SHA-256 of the source tree this binary was built
// from (package brood's embedded files, but for tests and test data, which
// no binary links: every path and its bytes, in lexical order). Skipping
// them halves what is read and hashed: about 1.5 of 3.7 MB.
func SourceDigest() (string, error) { return digestFS(brood.Source) }

func digestFS(fsys fs.FS) (string, error) {
	h := sha256.New()
	var n [8]byte
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == "testdata":
			return fs.SkipDir
		case d.IsDir() || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		binary.BigEndian.PutUint64(n[:], uint64(len(path)))
		h.Write(n[:])
		h.Write([]byte(path))
		binary.BigEndian.PutUint64(n[:], uint64(info.Size()))
		h.Write(n[:])
		f, err := fsys.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(h, f) // no copy of the file: embed's data is read in place
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sameSource says why the binary at cand was not built from this binary's
// source ("" when it was): it runs cand DigestFlag with an empty
// environment and compares what it prints with SourceDigest. cand is the
// installed file beside brood, not anything a child can write.
func sameSource(ctx context.Context, cand string) string {
	mine, err := SourceDigest()
	if err != nil {
		return "cannot digest this binary's source: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, digestTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cand, DigestFlag)
	cmd.Env = []string{}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return fmt.Sprintf("it does not report the source it was built from (%s %s: %v)", cand, DigestFlag, err)
	}
	theirs := strings.TrimSpace(out.String())
	if theirs != mine {
		return fmt.Sprintf("it was built from other source (digest %.12s, brood's %.12s)", theirs, mine)
	}
	return ""
}
