package temporal

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// checkoutSecretFile is where a checkout keeps the secret that names it
// as a fleet submitter, in its own git directory (a linked worktree's
// own): git never commits, clones or pushes it, and it moves with the
// checkout.
const checkoutSecretFile = "brood-checkout-secret"

// checkoutMark is the hash of the secret of the checkout holding root
// (origin.Mark), "" when it has none (or no git directory); create makes
// the secret when there is none yet. A secret that is not one this code
// wrote (a link, the wrong size: a hostile tree's) marks nothing.
func checkoutMark(root string, create bool) string {
	gitDir := findGitDir(root)
	if gitDir == "" {
		return ""
	}
	file := filepath.Join(gitDir, checkoutSecretFile)
	secret, err := readSecret(file)
	if errors.Is(err, fs.ErrNotExist) && create {
		secret, err = makeSecret(file)
	}
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte("brood checkout mark\x00" + secret))
	return hex.EncodeToString(sum[:])
}

// secretLen is the hex length of a checkout's secret (32 random bytes).
const secretLen = 64

func readSecret(file string) (string, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", errors.New(file + " is not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, secretLen+2))
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if _, err := hex.DecodeString(s); err != nil || len(s) != secretLen {
		return "", errors.New(file + " holds no checkout secret")
	}
	return s, nil
}

// makeSecret writes a new secret, never over anything (a racing
// submitter's secret wins: it is read back).
func makeSecret(file string) (string, error) {
	var b [secretLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	s := hex.EncodeToString(b[:])
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readSecret(file)
	} else if err != nil {
		return "", err
	}
	_, werr := f.WriteString(s + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(file)
		return "", werr
	}
	return s, nil
}

// findGitDir is the git directory of the checkout holding dir, as git
// finds it without its environment: the nearest .git up from dir, a
// directory, or a file naming one ("gitdir: PATH", a linked worktree's
// or a submodule's). "" when there is none.
func findGitDir(dir string) string {
	for d := dir; ; {
		p := filepath.Join(d, ".git")
		if st, err := os.Lstat(p); err == nil {
			switch {
			case st.IsDir():
				return p
			case st.Mode().IsRegular():
				return gitDirOfFile(d, p)
			}
			return ""
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
}

// gitDirOfFile reads a linked worktree's .git file ("gitdir: PATH",
// relative to its directory d), and holds it only when that git directory
// names this file back (its gitdir file, as git worktree writes it): a
// tree shipped with a .git file pointing into someone else's checkout
// (another of the user's, say) borrows no secret. A submodule's, and a
// moved worktree's not yet repaired, have no mark.
func gitDirOfFile(d, p string) string {
	b, err := os.ReadFile(p)
	if err != nil || len(b) > 4096 {
		return ""
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	g := strings.TrimSpace(rest)
	if !filepath.IsAbs(g) {
		g = filepath.Join(d, g)
	}
	if st, err := os.Stat(g); err != nil || !st.IsDir() {
		return ""
	}
	back, err := os.ReadFile(filepath.Join(g, "gitdir"))
	if err != nil || len(back) > 4096 {
		return ""
	}
	if b := strings.TrimSpace(string(back)); b != p && !sameFile(b, p) {
		return ""
	}
	return g
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
