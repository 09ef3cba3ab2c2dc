// Package blobstore is the store every brood worker and the submitter can
// reach: transcripts, partial patches, code snapshots and results too large
// for Temporal's history live here and travel as a Ref.
//
// A Store is opened from a URL (the `store` setting):
//
//	file:///shared/path                  a directory on a shared filesystem (NFS, a bind
//	                                     mount, one host's disk in tests)
//	s3://bucket/prefix?region=R          S3 or any S3-compatible server; endpoint=URL,
//	   [&endpoint=URL&use_path_style=true]  use_path_style=true and disable_https=true for
//	                                     MinIO, Ceph or a loopback fake; credentials from the
//	                                     usual AWS environment, profile or role
//
// Every object is written whole or not at all: a file store writes a
// temporary file beside the objects, syncs it and renames it into place, so
// writers on many hosts never see or leave half an object; S3 makes an
// object visible only when its upload completes. Nothing is ever cut: a
// Store has no size limit of its own.
//
// A Ref names an object and carries its size and SHA-256, taken while it was
// written. Reading through a Ref checks both: a blob that was changed,
// truncated or replaced since is refused with ErrCorrupt, never returned.
// PutContent stores under a content address (sha256/..), so the same bytes
// are stored once and a Ref to them stays valid forever; Put stores under an
// explicit key, and a later Put to that key makes earlier Refs to it read as
// corrupt, so anything another process holds a Ref to should be
// content-addressed.
//
// The package is for the submitter and the worker; a child process never
// opens a store (its parent, the worker, moves its files).
package blobstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Ref identifies one stored blob and what it must read back as.
type Ref struct {
	// Key is the object's name in the store ("sha256/ab/abcd..." for
	// content-addressed blobs).
	Key string `json:"key"`
	// Size is the blob's length in bytes.
	Size int64 `json:"size"`
	// SHA256 is the hex SHA-256 of the blob.
	SHA256 string `json:"sha256"`
}

// IsZero reports whether r names nothing.
func (r Ref) IsZero() bool { return r.Key == "" }

// String is a short form for messages.
func (r Ref) String() string {
	return fmt.Sprintf("%s (%d bytes, sha256 %.12s)", r.Key, r.Size, r.SHA256)
}

// Errors a Store returns; test with errors.Is.
var (
	// ErrNotFound: no object under the key.
	ErrNotFound = errors.New("not found")
	// ErrCorrupt: the object does not match its Ref (size or hash).
	ErrCorrupt = errors.New("does not match its reference")
	// ErrExists: Create found an object under the key already.
	ErrExists = errors.New("already exists")
	// ErrTooLarge: ReadRecord found more than its limit under the key.
	ErrTooLarge = errors.New("is larger than a record may be")
)

// backend is one storage mechanism. put is atomic: the object under key is
// either the old one or all of r.
type backend interface {
	put(ctx context.Context, key string, r io.Reader) error
	// create is put only when no object is under key (ErrExists else),
	// atomically: of two creates of one key, one fails.
	create(ctx context.Context, key string, data []byte) error
	get(ctx context.Context, key string) (io.ReadCloser, error)
	size(ctx context.Context, key string) (int64, error)
	remove(ctx context.Context, key string) error
	close() error
}

// Store is an opened blob store. It is safe for concurrent use.
type Store struct {
	b   backend
	url string // for messages, without credentials
}

// Open opens the store a URL names. An empty URL is an error that says how
// to set one.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	if strings.TrimSpace(rawURL) == "" {
		return nil, errors.New("blobstore: no store configured: set `store` (e.g. store = \"file:///shared/brood-store\" or \"s3://bucket/prefix?region=eu-west-1\") or BROOD_STORE")
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("blobstore: store URL %q: %w", redact(rawURL), err)
	}
	var b backend
	switch u.Scheme {
	case "file":
		b, err = openFile(u)
	case "s3":
		b, err = openBucket(ctx, u)
	default:
		return nil, fmt.Errorf("blobstore: store URL %q: unsupported scheme %q (use file:///path or s3://bucket/prefix)", redact(rawURL), u.Scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("blobstore: store %s: %w", redact(rawURL), err)
	}
	return &Store{b: b, url: redact(rawURL)}, nil
}

// URL is the store's URL as opened, credentials removed.
func (s *Store) URL() string { return s.url }

// Close releases the store's connections.
func (s *Store) Close() error { return s.b.close() }

// Put stores r under key, replacing any object there, and returns its Ref.
// Keys are slash-separated names of letters, digits, '.', '_' and '-'
// (no empty, "." or ".." segment).
func (s *Store) Put(ctx context.Context, key string, r io.Reader) (Ref, error) {
	if err := CheckKey(key); err != nil {
		return Ref{}, err
	}
	h := sha256.New()
	cr := &countReader{r: io.TeeReader(r, h)}
	if err := s.b.put(ctx, key, cr); err != nil {
		return Ref{}, s.wrap("put", key, err)
	}
	return Ref{Key: key, Size: cr.n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// Create stores data under key only when no object is there: a record
// made once (a claim), never replaced. Of two Creates of one key, one
// fails with ErrExists, whichever the host.
func (s *Store) Create(ctx context.Context, key string, data []byte) (Ref, error) {
	if err := CheckKey(key); err != nil {
		return Ref{}, err
	}
	if err := s.b.create(ctx, key, data); err != nil {
		if errors.Is(err, ErrExists) {
			return Ref{}, fmt.Errorf("create %s: %w", key, ErrExists)
		}
		return Ref{}, s.wrap("create", key, err)
	}
	sum := sha256.Sum256(data)
	return Ref{Key: key, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}, nil
}

// PutBytes stores data under its content address.
func (s *Store) PutBytes(ctx context.Context, data []byte) (Ref, error) {
	sum := sha256.Sum256(data)
	ref := Ref{Key: contentKey(hex.EncodeToString(sum[:])), Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	return ref, s.putAt(ctx, ref, func() (io.Reader, error) { return strings.NewReader(string(data)), nil })
}

// PutFile stores a local file under its content address, streaming it
// (twice: once to hash, once to upload, unless the store already holds it).
func (s *Store) PutFile(ctx context.Context, path string) (Ref, error) {
	f, err := os.Open(path)
	if err != nil {
		return Ref{}, fmt.Errorf("blobstore: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return Ref{}, fmt.Errorf("blobstore: read %s: %w", path, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	ref := Ref{Key: contentKey(sum), Size: n, SHA256: sum}
	return ref, s.putAt(ctx, ref, func() (io.Reader, error) {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		return io.LimitReader(f, n), nil
	})
}

// PutContent stores a stream under its content address. The stream is
// spooled to a local temporary file to learn its hash first.
func (s *Store) PutContent(ctx context.Context, r io.Reader) (Ref, error) {
	f, err := os.CreateTemp("", "brood-blob-*")
	if err != nil {
		return Ref{}, fmt.Errorf("blobstore: spool: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := io.Copy(f, r); err != nil {
		return Ref{}, fmt.Errorf("blobstore: spool: %w", err)
	}
	return s.PutFile(ctx, f.Name())
}

// putAt writes a content-addressed blob unless an intact copy is there
// already (a copy that does not verify is replaced).
func (s *Store) putAt(ctx context.Context, ref Ref, open func() (io.Reader, error)) error {
	if n, err := s.b.size(ctx, ref.Key); err == nil && n == ref.Size {
		if s.verify(ctx, ref) == nil {
			return nil
		}
	}
	r, err := open()
	if err != nil {
		return fmt.Errorf("blobstore: %w", err)
	}
	h := sha256.New()
	cr := &countReader{r: io.TeeReader(r, h)}
	if err := s.b.put(ctx, ref.Key, cr); err != nil {
		return s.wrap("put", ref.Key, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != ref.SHA256 || cr.n != ref.Size {
		return fmt.Errorf("blobstore: put %s: the source changed while it was stored (sha256 %.12s, want %.12s)", ref.Key, got, ref.SHA256)
	}
	return nil
}

func (s *Store) verify(ctx context.Context, ref Ref) error {
	rc, err := s.Get(ctx, ref)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(io.Discard, rc)
	return err
}

// Get opens the blob ref names. The reader checks size and hash as it goes:
// its last Read returns an error wrapping ErrCorrupt instead of io.EOF when
// the blob is not the one ref describes, so a caller that reads to io.EOF
// has the whole, intact blob. Use ReadAll or GetFile to never see a byte of
// a corrupt blob.
func (s *Store) Get(ctx context.Context, ref Ref) (io.ReadCloser, error) {
	if err := CheckKey(ref.Key); err != nil {
		return nil, err
	}
	if len(ref.SHA256) != sha256.Size*2 || ref.Size < 0 {
		return nil, fmt.Errorf("blobstore: reference to %s has no valid size and sha256: refusing to read unverified data", ref.Key)
	}
	rc, err := s.b.get(ctx, ref.Key)
	if err != nil {
		return nil, s.wrap("get", ref.Key, err)
	}
	v := &verifyReader{rc: rc, ref: ref, h: sha256.New(), store: s.url}
	if ref.Key == contentKey(ref.SHA256) {
		// Under its content's address no other bytes are ever right: a
		// corrupt object is removed, so whoever stores that content next
		// (a submitter's next run: its records check the object is
		// there) puts it back, instead of every later read failing.
		v.drop = func() error { return s.dropCorrupt(context.WithoutCancel(ctx), ref) }
	}
	return v, nil
}

// errIntact says a blob a reader found wrong is what its address names:
// the reader's reference was (its size), not the object.
var errIntact = errors.New("the stored object is intact (its bytes hash to its address): the reference to it is wrong")

// dropCorrupt removes the object under ref's content address when its
// stored bytes do not hash to that address, read again whole: a reader's
// size or hash is not proof (a forged reference must not delete a good
// object), the stored bytes are.
func (s *Store) dropCorrupt(ctx context.Context, ref Ref) error {
	rc, err := s.b.get(ctx, ref.Key)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(h, rc)
	rc.Close()
	if err != nil {
		return err
	}
	if hex.EncodeToString(h.Sum(nil)) == ref.SHA256 {
		return errIntact
	}
	return s.b.remove(ctx, ref.Key)
}

// ReadAll returns the whole blob, verified.
func (s *Store) ReadAll(ctx context.Context, ref Ref) ([]byte, error) {
	rc, err := s.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	// The buffer grows with what arrives; a Ref's size is only a hint
	// (and never allocated up front beyond 64 MiB).
	buf := make([]byte, 0, min(max(ref.Size, 0), 64<<20)+1)
	for {
		n, err := rc.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// ReadRecord is the object under key, at most limit bytes (a longer one
// is an error), read unverified: for a small record a caller checks by
// other means (a claim whose writer signed it), whose content it cannot
// know beforehand. Anything else is read by its Ref (Get, ReadAll).
func (s *Store) ReadRecord(ctx context.Context, key string, limit int64) ([]byte, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	rc, err := s.b.get(ctx, key)
	if err != nil {
		return nil, s.wrap("get", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	switch {
	case err != nil:
		return nil, s.wrap("get", key, err)
	case int64(len(b)) > limit:
		return nil, fmt.Errorf("blobstore: record %s is over %d bytes, not read: %w", key, limit, ErrTooLarge)
	}
	return b, nil
}

// GetFile writes the blob to path (tmp+rename in path's directory), only
// once it has verified; a corrupt blob leaves path untouched.
func (s *Store) GetFile(ctx context.Context, ref Ref, path string) error {
	rc, err := s.Get(ctx, ref)
	if err != nil {
		return err
	}
	defer rc.Close()
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".part*")
	if err != nil {
		return fmt.Errorf("blobstore: %w", err)
	}
	_, err = io.Copy(f, rc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// Size returns the stored size under key (ErrNotFound when absent).
func (s *Store) Size(ctx context.Context, key string) (int64, error) {
	if err := CheckKey(key); err != nil {
		return 0, err
	}
	n, err := s.b.size(ctx, key)
	if err != nil {
		return 0, s.wrap("stat", key, err)
	}
	return n, nil
}

// Delete removes the object under key; a missing one is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := s.b.remove(ctx, key); err != nil && !errors.Is(err, ErrNotFound) {
		return s.wrap("delete", key, err)
	}
	return nil
}

func (s *Store) wrap(op, key string, err error) error {
	return fmt.Errorf("blobstore: %s %s in %s: %w", op, key, s.url, err)
}

// contentKey is the content address of a hex SHA-256.
func contentKey(sum string) string { return "sha256/" + sum[:2] + "/" + sum }

// CheckKey reports whether key is a valid object name.
func CheckKey(key string) error {
	if key == "" || len(key) > 512 {
		return fmt.Errorf("blobstore: invalid key %q: must be 1 to 512 characters", key)
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, ".") {
			return fmt.Errorf("blobstore: invalid key %q: empty, dot or dot-prefixed segment", key)
		}
		for _, c := range seg {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
				return fmt.Errorf("blobstore: invalid key %q: only letters, digits, '.', '_', '-' and '/' are allowed", key)
			}
		}
	}
	return nil
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// verifyReader passes a blob through while hashing it and turns the end of
// a blob that does not match its Ref into ErrCorrupt.
type verifyReader struct {
	rc    io.ReadCloser
	ref   Ref
	h     hash.Hash
	n     int64
	store string
	err   error
	drop  func() error // removes a corrupt object (nil: kept)
}

// corrupt is the error of a blob that is not the one its ref describes,
// the object removed where drop says it may be.
func (v *verifyReader) corrupt(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if v.drop == nil {
		return fmt.Errorf("%w: %w", err, ErrCorrupt)
	}
	rerr := v.drop()
	if errors.Is(rerr, errIntact) {
		return fmt.Errorf("%w (%v): %w", err, rerr, ErrCorrupt)
	}
	if rerr != nil && !errors.Is(rerr, ErrNotFound) {
		return fmt.Errorf("%w (and it could not be removed: %v; remove %s from the store by hand): %w", err, rerr, v.ref.Key, ErrCorrupt)
	}
	return fmt.Errorf("%w: removed from the store, so it is stored again by the next run that has this content: %w", err, ErrCorrupt)
}

func (v *verifyReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.rc.Read(p)
	v.n += int64(n)
	v.h.Write(p[:n])
	if v.n > v.ref.Size {
		v.err = v.corrupt("blobstore: %s in %s is longer than its reference (%d bytes)", v.ref.Key, v.store, v.ref.Size)
		return 0, v.err
	}
	if err == io.EOF {
		if got := hex.EncodeToString(v.h.Sum(nil)); v.n != v.ref.Size || got != v.ref.SHA256 {
			v.err = v.corrupt("blobstore: %s in %s was changed or truncated (%d bytes, sha256 %.12s; want %d bytes, sha256 %.12s)",
				v.ref.Key, v.store, v.n, got, v.ref.Size, v.ref.SHA256)
			return 0, v.err
		}
		v.err = io.EOF
	} else if err != nil {
		v.err = fmt.Errorf("blobstore: read %s in %s: %w", v.ref.Key, v.store, err)
		return n, v.err
	}
	return n, err
}

func (v *verifyReader) Close() error { return v.rc.Close() }

// redact drops a URL's user info and secret-looking query values.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable URL>"
	}
	u.User = nil
	q := u.Query()
	for k := range q {
		lk := strings.ToLower(k)
		if strings.Contains(lk, "secret") || strings.Contains(lk, "token") || strings.Contains(lk, "key") && lk != "kmskeyid" {
			q.Set(k, "REDACTED")
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}
