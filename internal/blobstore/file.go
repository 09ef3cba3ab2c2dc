package blobstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
)

// fileBackend keeps objects as files under a directory, which may be shared
// by many hosts (NFS, a cluster filesystem). A write goes to a uniquely
// named file in root/.tmp (same filesystem, so rename is atomic), is synced,
// and is renamed over the object's path; the directory is synced after.
// Readers on any host see the old object or the new one, never a mix.
type fileBackend struct {
	root string
}

// openFile opens file:///abs/path. The directory must exist: a missing one
// usually means a shared mount is not there, and writing to the local disk
// instead would hide work from every other host.
func openFile(u *url.URL) (backend, error) {
	if u.Host != "" && u.Host != "localhost" {
		return nil, fmt.Errorf("file URLs name a local path: use file:///path (three slashes), not host %q", u.Host)
	}
	if u.RawQuery != "" {
		return nil, fmt.Errorf("file URLs take no parameters (got %q)", u.RawQuery)
	}
	root := filepath.Clean(u.Path)
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("path %q is not absolute: use file:///absolute/path", u.Path)
	}
	st, err := os.Stat(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("directory %s does not exist: create it (mkdir -p %s) or mount the shared store there", root, root)
		}
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", root)
	}
	if err := os.MkdirAll(filepath.Join(root, ".tmp"), 0o750); err != nil {
		return nil, fmt.Errorf("cannot write to %s: %w", root, err)
	}
	return &fileBackend{root: root}, nil
}

func (f *fileBackend) path(key string) string {
	return filepath.Join(f.root, filepath.FromSlash(key))
}

func (f *fileBackend) put(ctx context.Context, key string, r io.Reader) error {
	var rnd [12]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(f.root, ".tmp", hex.EncodeToString(rnd[:]))
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, ctxReader{ctx, r})
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	dst := f.path(key)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(dst), 0o750)
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(filepath.Dir(dst)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// create writes data to a file of its own in .tmp and links it to the
// object's path: link fails when a file is there, on every host of a
// shared filesystem (NFS too), so of two creates one wins.
func (f *fileBackend) create(ctx context.Context, key string, data []byte) error {
	var rnd [12]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(f.root, ".tmp", hex.EncodeToString(rnd[:]))
	defer os.Remove(tmp)
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	_, err = out.Write(data)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	dst := f.path(key)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(dst), 0o750)
	}
	if err != nil {
		return err
	}
	if err := os.Link(tmp, dst); errors.Is(err, fs.ErrExist) {
		return ErrExists
	} else if err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(dst)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func (f *fileBackend) get(ctx context.Context, key string) (io.ReadCloser, error) {
	fh, err := os.Open(f.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if st, err := fh.Stat(); err == nil && !st.Mode().IsRegular() {
		fh.Close()
		return nil, fmt.Errorf("%s is not a regular file", f.path(key))
	}
	return fh, nil
}

func (f *fileBackend) size(ctx context.Context, key string) (int64, error) {
	st, err := os.Stat(f.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (f *fileBackend) remove(ctx context.Context, key string) error {
	err := os.Remove(f.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNotFound
	}
	return err
}

func (f *fileBackend) close() error { return nil }

// ctxReader stops a copy when ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
