package blobstore

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"
)

// bucketBackend is an object store reached through gocloud.dev/blob (S3 and
// S3-compatible servers). An object becomes visible only when its upload
// completes; an aborted upload leaves the old object (or none).
type bucketBackend struct {
	b *blob.Bucket
}

// openBucket opens s3://bucket/prefix?params. The prefix (the URL's path)
// keeps brood's objects apart from anything else in the bucket.
func openBucket(ctx context.Context, u *url.URL) (backend, error) {
	if u.Host == "" {
		return nil, fmt.Errorf("no bucket: use s3://BUCKET/prefix")
	}
	q := u.Query()
	if q.Get("request_checksum_calculation") == "" {
		// Every upload is hashed by us and checked on read; when_required
		// keeps S3-compatible servers that reject the SDK's trailing
		// checksums working.
		q.Set("request_checksum_calculation", "when_required")
	}
	if q.Get("response_checksum_validation") == "" {
		q.Set("response_checksum_validation", "when_required")
	}
	bu := &url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: q.Encode()}
	b, err := (&s3blob.URLOpener{}).OpenBucketURL(ctx, bu)
	if err != nil {
		return nil, err
	}
	if prefix := strings.Trim(u.Path, "/"); prefix != "" {
		b = blob.PrefixedBucket(b, prefix+"/")
	}
	return &bucketBackend{b: b}, nil
}

func (k *bucketBackend) put(ctx context.Context, key string, r io.Reader) error {
	// Cancelling the writer's context before Close aborts the upload.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := k.b.NewWriter(wctx, key, &blob.WriterOptions{ContentType: "application/octet-stream", DisableContentTypeDetection: true})
	if err != nil {
		return k.err(err)
	}
	if _, err := io.Copy(w, r); err != nil {
		cancel()
		w.Close()
		return err
	}
	return k.err(w.Close())
}

// create is a conditional write (If-None-Match: *): the server refuses
// it when an object is under key.
func (k *bucketBackend) create(ctx context.Context, key string, data []byte) error {
	err := k.b.WriteAll(ctx, key, data, &blob.WriterOptions{ContentType: "application/octet-stream", DisableContentTypeDetection: true, IfNotExist: true})
	if err != nil && gcerrors.Code(err) == gcerrors.FailedPrecondition {
		return ErrExists
	}
	return k.err(err)
}

func (k *bucketBackend) get(ctx context.Context, key string) (io.ReadCloser, error) {
	r, err := k.b.NewReader(ctx, key, nil)
	if err != nil {
		return nil, k.err(err)
	}
	return r, nil
}

func (k *bucketBackend) size(ctx context.Context, key string) (int64, error) {
	a, err := k.b.Attributes(ctx, key)
	if err != nil {
		return 0, k.err(err)
	}
	return a.Size, nil
}

func (k *bucketBackend) remove(ctx context.Context, key string) error {
	return k.err(k.b.Delete(ctx, key))
}

func (k *bucketBackend) close() error { return k.b.Close() }

func (k *bucketBackend) err(err error) error {
	if err != nil && gcerrors.Code(err) == gcerrors.NotFound {
		return fmt.Errorf("%w (%v)", ErrNotFound, err)
	}
	return err
}
