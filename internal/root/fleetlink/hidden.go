package fleetlink

import (
	"net/url"
	"os"
	"path/filepath"
)

// workerHidden are the paths the worker opened for its own use, which no
// child of its reads (review C10): a file:// store's directory (every
// submitter's transcripts, results, snapshot packs and claims) and the
// trusted-key files named by path (--trusted-key FILE, made absolute). Its cache, its
// own keys and ~/.config/brood are hidden from every child already
// (isolate.DefaultHidden).
func workerHidden(store string, trustedKeys []string) []string {
	var out []string
	if u, err := url.Parse(store); err == nil && u.Scheme == "file" && filepath.IsAbs(u.Path) {
		out = append(out, filepath.Clean(u.Path))
	}
	for _, k := range trustedKeys {
		k, err := filepath.Abs(k)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(k); err == nil && fi.Mode().IsRegular() {
			out = append(out, k)
		}
	}
	return out
}
