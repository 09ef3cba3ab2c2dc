package temporal

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
)

// Store is what every worker and the submitter reach: transcripts of calls
// in flight (so a retry on another worker continues them) and the results
// of finished calls (so a retry never runs one twice). Keys are relative
// slash paths that this package makes from task ids; Get of a missing key
// is fs.ErrNotExist.
//
// This is the seam the fleet's shared store (internal/blobstore) plugs
// into; DirStore is the file:// one, for one machine or a shared path.
type Store interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
}

// transcriptKey and resultKey name a task's objects in the store.
func transcriptKey(id string) string { return "transcripts/" + id + ".jsonl" }
func resultKey(id string) string     { return "results/" + id + ".json" }

// DirStore keeps objects as files under a directory (written tmp+rename).
type DirStore struct{ Dir string }

// OpenStore opens a store by URL: file:///path (or a plain absolute path).
func OpenStore(raw string) (Store, error) {
	if raw == "" {
		return nil, errors.New("no fleet store configured: set temporal.store (e.g. file:///shared/brood-store) so workers can hand calls to each other")
	}
	path := raw
	if strings.Contains(raw, "://") {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("temporal.store %q: %v", raw, err)
		}
		if u.Scheme != "file" {
			return nil, fmt.Errorf("temporal.store %q: the %s:// scheme is not supported here; use file:///shared/path", raw, u.Scheme)
		}
		path = u.Path
	}
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("temporal.store %q: give an absolute path (file:///shared/brood-store)", raw)
	}
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("temporal.store: %w", err)
	}
	return &DirStore{Dir: path}, nil
}

func (s *DirStore) path(key string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(key))
	if !fs.ValidPath(key) || clean != filepath.FromSlash(key) || strings.HasPrefix(clean, "..") {
		return "", fmt.Errorf("store key %q is not a clean relative path", key)
	}
	return filepath.Join(s.Dir, clean), nil
}

// Put implements Store.
func (s *DirStore) Put(ctx context.Context, key string, data []byte) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return dispatch.WriteFileAtomic(p, data)
}

// Get implements Store.
func (s *DirStore) Get(ctx context.Context, key string) ([]byte, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}
