package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/dispatch"
)

// Store is what every worker and the submitter reach: the transcripts of
// calls in flight (a retry on another worker continues them) and the
// results of finished ones (a retry never runs one twice). Objects are
// content-addressed and read back only through a Ref that carries their
// size and SHA-256, so a heartbeat's reference names exactly the bytes it
// was made from.
//
// *blobstore.Store (the fleet's shared store, file:// or s3://) is one;
// DirStore is a minimal file one for tests.
type Store interface {
	PutBytes(ctx context.Context, data []byte) (Ref, error)
	ReadAll(ctx context.Context, ref Ref) ([]byte, error)
}

// store is the fleet's store as the submitter uses it: Config.Store, else
// its code's (nil: neither).
func (e *Engine) store() Store {
	if e.cfg.Store != nil {
		return e.cfg.Store
	}
	if e.cfg.Code != nil && e.cfg.Code.Blobs != nil {
		return e.cfg.Code.Blobs
	}
	return nil
}

// Ref names one stored object and what it must read back as (size and
// SHA-256): the fleet store's own reference.
type Ref = blobstore.Ref

// DefaultStoreTail ends the path of the store used when none is set
// (under the user's home).
const DefaultStoreTail = "/.cache/brood/fleet-store"

// DirStore keeps objects as files under a directory (written tmp+rename).
type DirStore struct{ Dir string }

// OpenStore opens the fleet's store by URL (the `store` setting):
// file:///shared/path or s3://bucket/prefix?region=R (internal/blobstore).
// A file store's directory must exist: a missing one is refused, never
// made (an unmounted shared directory would silently become local disk
// no other worker sees) — except the default one machine's workers and
// submitters share when no store is set (~/.cache/brood/fleet-store),
// which is local by definition and made on first use.
func OpenStore(ctx context.Context, raw string) (Store, error) {
	if raw == "" {
		return nil, errors.New("no fleet store configured: set store (e.g. store = \"file:///shared/brood-store\") so workers can hand calls to each other")
	}
	if u, err := url.Parse(raw); err == nil && u.Scheme == "file" && filepath.IsAbs(u.Path) && strings.HasSuffix(filepath.Clean(u.Path), DefaultStoreTail) {
		if err := os.MkdirAll(u.Path, 0o700); err != nil {
			return nil, fmt.Errorf("store: the default store %s: %w", u.Path, err)
		}
	}
	s, err := blobstore.Open(ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return s, nil
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
	f, err := os.Open(filepath.Join(s.Dir, filepath.FromSlash(ref.Key)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("store: %s: %w", ref.Key, blobstore.ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max(ref.Size, 0)+1)) // as blobstore: never more than the ref says, and one byte to tell
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	sum := sha256.Sum256(b)
	if int64(len(b)) != ref.Size || hex.EncodeToString(sum[:]) != ref.SHA256 {
		return nil, fmt.Errorf("store: %s %w", ref.Key, blobstore.ErrCorrupt)
	}
	return b, nil
}

var _ Store = (*blobstore.Store)(nil)
