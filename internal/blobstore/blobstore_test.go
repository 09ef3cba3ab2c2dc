package blobstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/broodhq/brood/internal/blobstore"
)

// stores opens one store per backend: a directory, and a real S3 server on
// loopback (gofakes3) reached through the production S3 client. tamper
// replaces an object's bytes behind the store's back.
type fixture struct {
	name   string
	url    string
	tamper func(t *testing.T, key string, data []byte)
}

func fixtures(t *testing.T) []fixture {
	dir := t.TempDir()
	mem := s3mem.New()
	faker := gofakes3.New(mem)
	srv := httptest.NewServer(faker.Server())
	t.Cleanup(srv.Close)
	if err := mem.CreateBucket("brood"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "no-aws-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "no-aws-credentials"))
	fileDir := filepath.Join(dir, "store")
	if err := os.Mkdir(fileDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return []fixture{
		{name: "file", url: "file://" + fileDir, tamper: func(t *testing.T, key string, data []byte) {
			if err := os.WriteFile(filepath.Join(fileDir, filepath.FromSlash(key)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "s3", url: "s3://brood/runs/x?region=us-east-1&use_path_style=true&disable_https=true&endpoint=" + srv.URL, tamper: func(t *testing.T, key string, data []byte) {
			if _, err := mem.PutObject("brood", "runs/x/"+key, map[string]string{}, bytes.NewReader(data), int64(len(data)), nil); err != nil {
				t.Fatal(err)
			}
		}},
	}
}

func open(t *testing.T, url string) *blobstore.Store {
	t.Helper()
	s, err := blobstore.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func TestRoundTrip(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			ctx := t.Context()
			s := open(t, fx.url)
			cases := []struct {
				name string
				data []byte
			}{
				{"empty", nil},
				{"small", []byte("hello\n")},
				{"binary", []byte{0, 1, 2, 0xff, 0, '\n'}},
				{"over the payload limit", randomBytes(t, 3<<20)},
			}
			for _, c := range cases {
				ref, err := s.PutBytes(ctx, c.data)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if ref.Size != int64(len(c.data)) || !strings.HasPrefix(ref.Key, "sha256/") {
					t.Fatalf("%s: ref %+v", c.name, ref)
				}
				got, err := s.ReadAll(ctx, ref)
				if err != nil || !bytes.Equal(got, c.data) {
					t.Fatalf("%s: read back %d bytes, %v", c.name, len(got), err)
				}
				// The same bytes again are the same object.
				again, err := s.PutContent(ctx, bytes.NewReader(c.data))
				if err != nil || again != ref {
					t.Fatalf("%s: second put %+v, %v; want %+v", c.name, again, err, ref)
				}
				// An explicit key holds the same bytes.
				kref, err := s.Put(ctx, "tasks/t1/"+strings.ReplaceAll(c.name, " ", "-"), bytes.NewReader(c.data))
				if err != nil || kref.SHA256 != ref.SHA256 || kref.Size != ref.Size {
					t.Fatalf("%s: keyed put %+v, %v", c.name, kref, err)
				}
				if got, err := s.ReadAll(ctx, kref); err != nil || !bytes.Equal(got, c.data) {
					t.Fatalf("%s: keyed read %d bytes, %v", c.name, len(got), err)
				}
			}
		})
	}
}

func TestLargeStream(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			ctx := t.Context()
			s := open(t, fx.url)
			data := randomBytes(t, 24<<20)
			src := filepath.Join(t.TempDir(), "big")
			if err := os.WriteFile(src, data, 0o600); err != nil {
				t.Fatal(err)
			}
			ref, err := s.PutFile(ctx, src)
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "copy")
			if err := s.GetFile(ctx, ref, dst); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(dst)
			if !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes of %d, not equal", len(got), len(data))
			}
		})
	}
}

func TestTamperedBlobIsRefused(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			ctx := t.Context()
			s := open(t, fx.url)
			orig := []byte(strings.Repeat("the child's transcript\n", 1000))
			tampers := []struct {
				name string
				data []byte
			}{
				{"one byte changed", append(append([]byte{}, orig[:100]...), append([]byte{'X'}, orig[101:]...)...)},
				{"truncated", orig[:len(orig)/2]},
				{"extended", append(append([]byte{}, orig...), "rm -rf /\n"...)},
				{"emptied", nil},
			}
			for _, tc := range tampers {
				ref, err := s.PutBytes(ctx, orig)
				if err != nil {
					t.Fatal(err)
				}
				fx.tamper(t, ref.Key, tc.data)
				if got, err := s.ReadAll(ctx, ref); !errors.Is(err, blobstore.ErrCorrupt) {
					t.Fatalf("%s: ReadAll = %d bytes, %v; want ErrCorrupt", tc.name, len(got), err)
				}
				// Under its content's address it is removed, so a
				// submitter's record of it (packchain: the object's size)
				// no longer finds it and stores it again.
				if _, err := s.Size(ctx, ref.Key); !errors.Is(err, blobstore.ErrNotFound) {
					t.Fatalf("%s: the corrupt object is still in the store: %v", tc.name, err)
				}
				fx.tamper(t, ref.Key, tc.data)
				dst := filepath.Join(t.TempDir(), "out")
				if err := s.GetFile(ctx, ref, dst); !errors.Is(err, blobstore.ErrCorrupt) {
					t.Fatalf("%s: GetFile = %v; want ErrCorrupt", tc.name, err)
				}
				if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s: a corrupt blob left %s behind", tc.name, dst)
				}
				// Storing the content again repairs the object.
				if _, err := s.PutBytes(ctx, orig); err != nil {
					t.Fatal(err)
				}
				if got, err := s.ReadAll(ctx, ref); err != nil || !bytes.Equal(got, orig) {
					t.Fatalf("%s: after repair: %d bytes, %v", tc.name, len(got), err)
				}
			}
			// A reference with the right address and a wrong size (a
			// forged one) is refused, and the intact object kept.
			good, err := s.PutBytes(ctx, orig)
			if err != nil {
				t.Fatal(err)
			}
			for _, size := range []int64{good.Size - 1, good.Size + 1, 1} {
				forged := good
				forged.Size = size
				if _, err := s.ReadAll(ctx, forged); !errors.Is(err, blobstore.ErrCorrupt) {
					t.Fatalf("size %d: ReadAll = %v; want ErrCorrupt", size, err)
				}
				if got, err := s.ReadAll(ctx, good); err != nil || !bytes.Equal(got, orig) {
					t.Fatalf("size %d: a forged reference removed or changed the intact object: %d bytes, %v", size, len(got), err)
				}
			}
			// A reference without a hash is never read.
			if _, err := s.Get(ctx, blobstore.Ref{Key: "tasks/x", Size: 3}); err == nil || !strings.Contains(err.Error(), "unverified") {
				t.Fatalf("Get without hash: %v", err)
			}
			// A missing object is ErrNotFound.
			if _, err := s.ReadAll(ctx, blobstore.Ref{Key: "tasks/missing", Size: 1, SHA256: strings.Repeat("0", 64)}); !errors.Is(err, blobstore.ErrNotFound) {
				t.Fatalf("missing: %v", err)
			}
		})
	}
}

// TestConcurrentWriters has several "hosts" (separate Store values on one
// store) write the same and different objects at once: every object ends
// up whole and no temporary file is left.
func TestConcurrentWriters(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			ctx := t.Context()
			shared := randomBytes(t, 1<<20)
			const hosts = 6
			refs := make([][]blobstore.Ref, hosts)
			errs := make([]error, hosts)
			var wg sync.WaitGroup
			for h := range hosts {
				s := open(t, fx.url)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 4 {
						r1, err := s.PutBytes(ctx, shared)
						if err != nil {
							errs[h] = err
							return
						}
						own := fmt.Appendf(nil, "host %d object %d", h, i)
						r2, err := s.Put(ctx, fmt.Sprintf("hosts/%d/%d", h, i), bytes.NewReader(own))
						if err != nil {
							errs[h] = err
							return
						}
						refs[h] = append(refs[h], r1, r2)
					}
				}()
			}
			wg.Wait()
			s := open(t, fx.url)
			for h := range hosts {
				if errs[h] != nil {
					t.Fatalf("host %d: %v", h, errs[h])
				}
				for _, ref := range refs[h] {
					if _, err := s.ReadAll(ctx, ref); err != nil {
						t.Fatalf("host %d: %v", h, err)
					}
				}
			}
			if fx.name == "file" {
				dir := strings.TrimPrefix(fx.url, "file://")
				left, _ := os.ReadDir(filepath.Join(dir, ".tmp"))
				if len(left) != 0 {
					t.Fatalf("temporary files left: %d", len(left))
				}
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o600)
	cases := []struct{ url, want string }{
		{"", "no store configured"},
		{"ftp://x/y", "unsupported scheme"},
		{"file://relative/path", "file:///path"},
		{"file://" + filepath.Join(dir, "missing"), "does not exist: create it"},
		{"file://" + file, "not a directory"},
		{"s3:///prefix", "no bucket"},
	}
	for _, c := range cases {
		_, err := blobstore.Open(t.Context(), c.url)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%q) = %v; want an error containing %q", c.url, err, c.want)
		}
	}
}

func TestCheckKey(t *testing.T) {
	for _, c := range []struct {
		key string
		ok  bool
	}{
		{"tasks/01J/transcript", true},
		{"sha256/ab/abcdef", true},
		{"a.b-c_d", true},
		{"", false},
		{"/abs", false},
		{"a//b", false},
		{"a/../b", false},
		{"a/./b", false},
		{".tmp/x", false},
		{"a/b c", false},
		{"a\\b", false},
		{strings.Repeat("a", 513), false},
	} {
		if err := blobstore.CheckKey(c.key); (err == nil) != c.ok {
			t.Errorf("CheckKey(%q) = %v, want ok=%v", c.key, err, c.ok)
		}
	}
}

func TestPutAbortedByCancelLeavesNothing(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			s := open(t, fx.url)
			ctx, cancel := context.WithCancel(t.Context())
			r := &failAfter{data: randomBytes(t, 1<<20), n: 512 << 10, cancel: cancel}
			if _, err := s.Put(ctx, "tasks/aborted", r); err == nil {
				t.Fatal("a put whose source failed succeeded")
			}
			if _, err := s.Size(t.Context(), "tasks/aborted"); !errors.Is(err, blobstore.ErrNotFound) {
				t.Fatalf("aborted object: %v; want ErrNotFound", err)
			}
		})
	}
}

// failAfter yields n bytes and then fails (and cancels the put's context).
type failAfter struct {
	data   []byte
	n      int
	cancel func()
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n <= 0 {
		f.cancel()
		return 0, errors.New("source broke")
	}
	k := copy(p, f.data[:min(len(p), f.n)])
	f.data, f.n = f.data[k:], f.n-k
	return k, nil
}

var _ io.Reader = (*failAfter)(nil)

// TestCreateOnlyOnce: of many hosts creating one key at once, exactly one
// does; the others are told it exists, and the record is the winner's.
func TestCreateOnlyOnce(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			ctx := t.Context()
			const hosts = 8
			refs := make([]blobstore.Ref, hosts)
			errs := make([]error, hosts)
			var wg sync.WaitGroup
			for h := range hosts {
				s := open(t, fx.url)
				wg.Add(1)
				go func() {
					defer wg.Done()
					refs[h], errs[h] = s.Create(ctx, "claims/run/1", fmt.Appendf(nil, "host %d", h))
				}()
			}
			wg.Wait()
			won := -1
			for h := range hosts {
				switch {
				case errs[h] == nil && won >= 0:
					t.Fatalf("hosts %d and %d both created the record", won, h)
				case errs[h] == nil:
					won = h
				case !errors.Is(errs[h], blobstore.ErrExists):
					t.Fatalf("host %d: %v; want ErrExists", h, errs[h])
				}
			}
			if won < 0 {
				t.Fatal("no host created the record")
			}
			b, err := open(t, fx.url).ReadAll(ctx, refs[won])
			if err != nil || string(b) != fmt.Sprintf("host %d", won) {
				t.Fatalf("the record: %q, %v; want the winner's", b, err)
			}
		})
	}
}
