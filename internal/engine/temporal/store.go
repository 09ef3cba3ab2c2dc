package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
)

// Store is what every worker and the submitter reach: the transcripts of
// calls in flight (a retry on another worker continues them) and the
// results of finished ones (a retry never runs one twice). Objects are
// content-addressed and read back only through a Ref that carries their
// size and SHA-256, so a heartbeat's reference names exactly the bytes it
// was made from.
//
// It is the shape of the fleet's shared store (internal/blobstore, whose
// *Store has these two methods); DirStore is the file:// one this package
// uses until that lands.
type Store interface {
	PutBytes(ctx context.Context, data []byte) (Ref, error)
	ReadAll(ctx context.Context, ref Ref) ([]byte, error)
}

// Ref names one stored object and what it must read back as.
type Ref struct {
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// IsZero reports whether r names nothing.
func (r Ref) IsZero() bool { return r.Key == "" }

// DirStore keeps objects as files under a directory (written tmp+rename).
type DirStore struct{ Dir string }

// OpenStore opens a store by URL: file:///path.
func OpenStore(raw string) (Store, error) {
	if raw == "" {
		return nil, errors.New("no fleet store configured: set temporal.store (e.g. file:///shared/brood-store) so workers can hand calls to each other")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "file" || !filepath.IsAbs(u.Path) {
		return nil, fmt.Errorf("temporal.store %q: use file:///shared/path (an absolute path every worker reaches)", raw)
	}
	if err := os.MkdirAll(u.Path, 0o700); err != nil {
		return nil, fmt.Errorf("temporal.store: %w", err)
	}
	return &DirStore{Dir: u.Path}, nil
}

// PutBytes implements Store.
func (s *DirStore) PutBytes(ctx context.Context, data []byte) (Ref, error) {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	ref := Ref{Key: "sha256/" + h[:2] + "/" + h, Size: int64(len(data)), SHA256: h}
	p := filepath.Join(s.Dir, filepath.FromSlash(ref.Key))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return Ref{}, err
	}
	return ref, dispatch.WriteFileAtomic(p, data)
}

// ReadAll implements Store: the object, verified against its ref.
func (s *DirStore) ReadAll(ctx context.Context, ref Ref) ([]byte, error) {
	if !strings.HasPrefix(ref.Key, "sha256/") || strings.Contains(ref.Key, "..") || len(ref.SHA256) != 64 {
		return nil, fmt.Errorf("store: %q is not a reference to a stored object", ref.Key)
	}
	b, err := os.ReadFile(filepath.Join(s.Dir, filepath.FromSlash(ref.Key)))
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	sum := sha256.Sum256(b)
	if int64(len(b)) != ref.Size || hex.EncodeToString(sum[:]) != ref.SHA256 {
		return nil, fmt.Errorf("store: %s does not match its reference", ref.Key)
	}
	return b, nil
}
