package codesnap_test

import (
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/codesnap"
)

// TestOverS3 ships unpushed commits and a dirty tree through a real S3
// server on loopback, and the child's change back.
func TestOverS3(t *testing.T) {
	ctx := t.Context()
	h := newHosts(t)
	mem := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(mem).Server())
	defer srv.Close()
	if err := mem.CreateBucket("fleet"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	s, err := blobstore.Open(ctx, "s3://fleet/brood?region=us-east-1&use_path_style=true&disable_https=true&endpoint="+srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write(t, filepath.Join(h.repo, "local.txt"), "committed, not pushed\n")
	git(t, h.repo, "add", "local.txt")
	git(t, h.repo, "commit", "-q", "-m", "local")
	write(t, filepath.Join(h.repo, "untracked.txt"), "dirty\n")
	snap, err := codesnap.Capture(ctx, s, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Bundle == nil || snap.Pack == nil {
		t.Fatalf("want a bundle and a pack: %+v", snap)
	}
	co, err := h.cache.Materialise(ctx, s, snap, codesnap.Options{ID: "s3"})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Cleanup()
	if got := read(t, filepath.Join(co.Root, "local.txt")); got != "committed, not pushed\n" {
		t.Fatalf("local.txt in the copy: %q", got)
	}
	write(t, filepath.Join(co.Root, "untracked.txt"), "changed by the child\n")
	res, err := co.Result(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	out, err := codesnap.Apply(ctx, s, h.repo, "", snap, res)
	if err != nil || !out.Applied {
		t.Fatalf("apply: %v %+v", err, out)
	}
	if got := read(t, filepath.Join(h.repo, "untracked.txt")); got != "changed by the child\n" {
		t.Fatalf("untracked.txt after apply: %q", got)
	}
}
