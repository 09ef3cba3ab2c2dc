package temporal

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"go.temporal.io/sdk/temporal"

	"github.com/broodhq/brood/internal/blobstore"
)

// Signed submissions by reference. A run's submission (its plan, inputs,
// limits and snapshot) grows with the plan, and every activity of the run
// carries it: inline, a history would grow with calls × plan size (5 KB
// per call for a 300-item each, tens of MB for a few thousand items, and
// Temporal ends a run whose history is too large). So the submitter puts
// the signed payload in the fleet's store once, under its content address,
// and the calls carry only its Ref, the key and the signature.
//
// The worker reads the payload through the Ref (the store checks its size
// and SHA-256: whoever writes to the store cannot substitute other bytes),
// then checks the signature over those bytes exactly as for an inline one.
// It keeps what it verified, by (SHA-256, key, signature), so a run's calls
// read and verify it once per worker, not once per call.

// maxSignedPayload bounds a signed submission read from the store (a plan
// with its inputs; Temporal refuses a whole workflow input over 2 MiB).
const maxSignedPayload = 16 << 20

// verifiedCacheSize is how many verified submissions a worker keeps (the
// oldest goes first): a few hundred runs at once.
const verifiedCacheSize = 256

// verifiedCacheBytes bounds the payload bytes behind the kept submissions
// (the oldest go first), so 256 submissions of the largest size a worker
// reads cannot hold gigabytes.
const verifiedCacheBytes = 64 << 20

// verifiedKey names a verified submission: the SHA-256 of its payload,
// the key that signed it and the signature.
type verifiedKey struct{ sum, key, sig string }

// verifiedCache is a worker's verified submissions, bounded: the oldest
// entry goes when a new one comes. Safe for concurrent use.
type verifiedCache struct {
	mu    sync.Mutex
	m     map[verifiedKey]*Submission
	ring  [verifiedCacheSize]verifiedKey
	sizes [verifiedCacheSize]int
	next  int // the oldest entry's slot (the next written)
	bytes int // the payload bytes behind the entries
}

// get is the verified submission under k. It is shared: read it only.
func (c *verifiedCache) get(k verifiedKey) (*Submission, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sub, ok := c.m[k]
	return sub, ok
}

// put keeps sub under k (n payload bytes behind it), dropping the oldest
// entries while it is full by count or by bytes.
func (c *verifiedCache) put(k verifiedKey, sub *Submission, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; ok || n > verifiedCacheBytes {
		return
	}
	if c.m == nil {
		c.m = make(map[verifiedKey]*Submission, verifiedCacheSize)
	}
	c.drop(c.next) // the slot k takes
	for i := 1; i < verifiedCacheSize && c.bytes+n > verifiedCacheBytes; i++ {
		c.drop((c.next + i) % verifiedCacheSize) // the oldest after it
	}
	c.ring[c.next], c.sizes[c.next] = k, n
	c.next = (c.next + 1) % verifiedCacheSize
	c.m[k] = sub
	c.bytes += n
}

// drop empties slot i.
func (c *verifiedCache) drop(i int) {
	if old := c.ring[i]; old != (verifiedKey{}) {
		delete(c.m, old)
		c.bytes -= c.sizes[i]
		c.ring[i], c.sizes[i] = verifiedKey{}, 0
	}
}

// size is how many submissions it holds.
func (c *verifiedCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// cacheKey is s's key in the cache: the SHA-256 its Ref names (checked
// when the payload is read) or, inline, of its payload.
func cacheKey(s *Signed) verifiedKey {
	sum := ""
	if s.Payload == nil && s.Ref != nil {
		sum = s.Ref.SHA256
	} else {
		h := sha256.Sum256(s.Payload)
		sum = hex.EncodeToString(h[:])
	}
	return verifiedKey{sum: sum, key: string(s.Key), sig: string(s.Sig)}
}

// retry is an admission that could not be decided now (the store could not
// be read): the activity fails retryably and is tried again.
type retry struct{ error }

// admitError is how an activity fails on an admission's error: refused
// and not retried, unless it could not be decided.
func admitError(err error) error {
	var r retry
	if errors.As(err, &r) {
		return err
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), ErrRefused, nil)
}

// refSignedBy checks that s's reference (if it has one instead of an
// inline payload) carries its key's signature: before the cache or the
// store is consulted, so a submission naming a trusted key with a forged
// signature costs a worker no store read.
func refSignedBy(s *Signed) error {
	if s.Payload != nil || s.Ref == nil {
		return nil
	}
	if len(s.Key) != ed25519.PublicKeySize || !ed25519.Verify(ed25519.PublicKey(s.Key), refSigned(*s.Ref), s.RefSig) {
		return fmt.Errorf("the signed submission of key %s names %s in the store without that key's signature over the reference: it was not made by that key's holder; submit it again", Fingerprint(s.Key), s.Ref.Key)
	}
	return nil
}

// payload is the signed bytes of s: inline, or read from the store through
// its Ref (size and SHA-256 checked by the store). A payload that is not
// what its Ref names is refused; one the store cannot give now is retried.
func payload(ctx context.Context, store Store, s *Signed) ([]byte, error) {
	if s.Payload != nil || s.Ref == nil {
		return s.Payload, nil
	}
	ref, fp := *s.Ref, Fingerprint(s.Key)
	if _, err := hex.DecodeString(ref.SHA256); err != nil || len(ref.SHA256) != 2*sha256.Size || ref.Key != "sha256/"+ref.SHA256[:2]+"/"+ref.SHA256 {
		return nil, fmt.Errorf("the signed submission of key %s names %q in the store, not a content address (sha256/xx/<sha256>): it was not made by brood; submit it again", fp, ref.Key)
	}
	if ref.Size < 0 || ref.Size > maxSignedPayload {
		return nil, fmt.Errorf("the signed submission of key %s in the store (%s) is %d bytes, over the %d a worker reads: submit a smaller plan or inputs", fp, ref.Key, ref.Size, maxSignedPayload)
	}
	if store == nil {
		return nil, fmt.Errorf("the signed submission of key %s is in the fleet store (%s) and this worker has none: start it with --store naming the submitter's store", fp, ref.Key)
	}
	b, err := store.ReadAll(ctx, ref)
	switch {
	case errors.Is(err, blobstore.ErrCorrupt):
		return nil, fmt.Errorf("the signed submission of key %s in the fleet store (%s) does not match its reference: it was changed in the store after it was put there; submit it again", fp, ref.Key)
	case errors.Is(err, blobstore.ErrNotFound):
		return nil, retry{fmt.Errorf("the signed submission of key %s is not in the fleet store (%s): check this worker's --store is the submitter's; the call is tried again", fp, ref.Key)}
	case err != nil:
		return nil, retry{fmt.Errorf("read the signed submission of key %s from the fleet store (the call is tried again): %w", fp, err)}
	}
	return b, nil
}

// sign signs a submission (nil: no key, unsigned) and, when the engine has
// a store, puts its payload there once: only its reference, the key and
// the signature travel in the run's input and every call's.
func (e *Engine) sign(ctx context.Context, sub Submission) (*Signed, error) {
	sub.Namespace = e.cfg.Namespace
	s, err := e.cfg.Signer.Sign(sub)
	if s == nil || err != nil {
		return s, err
	}
	store := e.store()
	if store == nil {
		return s, nil
	}
	ref, err := store.PutBytes(ctx, s.Payload)
	if err != nil {
		return nil, fmt.Errorf("put the signed submission in the fleet store: %w", err)
	}
	s.Payload, s.Ref, s.RefSig = nil, &ref, e.cfg.Signer.SignRef(ref)
	return s, nil
}
