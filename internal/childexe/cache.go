package childexe

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
)

// The byte check of an unstamped, unversioned build (both binaries read
// and hashed: tens of ms, on the first spawn's path) is
// remembered in the user's cache directory, keyed by both files' identity:
// device, inode, size, modification and change times. Any rebuild or
// reinstall changes one of them (a change time cannot be set), so a
// remembered verdict is about exactly the two files on disk now. Only the
// user's own processes write there: a child's sandbox does not reach it.

// identity is what names one version of a file on disk.
type identity struct {
	Dev, Ino, Size, Mtime, Ctime int64
}

func identityOf(path string) (identity, bool) {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return identity{}, false
	}
	return identity{Dev: int64(st.Dev), Ino: int64(st.Ino), Size: st.Size,
		Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}, true
}

// verdict is one remembered byte check.
type verdict struct {
	Self, Cand identity
	Why        string // "" = the same source
}

// cachePath is where the verdict for self and cand is kept ("" when the
// user has no cache directory).
func cachePath(cacheDir, self, cand string) string {
	if cacheDir == "" {
		return ""
	}
	h := sha256.Sum256([]byte(self + "\x00" + cand))
	return filepath.Join(cacheDir, "brood", "lean", hex.EncodeToString(h[:16])+".json")
}

// remembered returns the verdict kept for self and cand, if both files are
// still the ones it was made about.
func remembered(path, self, cand string) (string, bool) {
	if path == "" {
		return "", false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	var v verdict
	if json.Unmarshal(b, &v) != nil {
		return "", false
	}
	si, ok1 := identityOf(self)
	ci, ok2 := identityOf(cand)
	if !ok1 || !ok2 || si != v.Self || ci != v.Cand {
		return "", false
	}
	return v.Why, true
}

// remember keeps a verdict for self and cand (tmp+rename; a failure only
// means the next process checks again). si and ci are the identities taken
// before the check, so a file replaced during it is never vouched for.
func remember(path string, si, ci identity, why string) {
	if path == "" {
		return
	}
	b, err := json.Marshal(verdict{Self: si, Cand: ci, Why: why})
	if err != nil || os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".verdict-*")
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil && cerr == nil && os.Rename(f.Name(), path) == nil {
		return
	}
	_ = os.Remove(f.Name())
}

// sameSourceCached is check (sameBytes), remembered across processes.
func sameSourceCached(self, cand string, check func() string) string {
	cacheDir, _ := os.UserCacheDir()
	path := cachePath(cacheDir, self, cand)
	if why, ok := remembered(path, self, cand); ok {
		return why
	}
	si, ok1 := identityOf(self)
	ci, ok2 := identityOf(cand)
	why := check()
	if ok1 && ok2 {
		if si2, _ := identityOf(self); si2 == si {
			if ci2, _ := identityOf(cand); ci2 == ci {
				remember(path, si, ci, why)
			}
		}
	}
	return why
}
