package taskdir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteOwnerDurable: the record is in place (readable, whole, no
// temporary file beside it) as soon as the call returns, before its fsync
// has finished; Wait reports the fsync; a linked records directory is
// refused and nothing is written through it.
func TestWriteOwnerDurable(t *testing.T) {
	cases := []struct {
		name    string
		plant   func(t *testing.T, p Project, victim string)
		wantErr error
	}{
		{"records directory missing (first task)", func(*testing.T, Project, string) {}, nil},
		{"records directory there", func(t *testing.T, p Project, _ string) {
			must(t, os.MkdirAll(p.RecordsDir(), 0o755))
		}, nil},
		{"records directory a link", func(t *testing.T, p Project, victim string) {
			must(t, os.MkdirAll(p.StateDir(), 0o755))
			must(t, os.Symlink(filepath.Dir(victim), p.RecordsDir()))
		}, ErrLink},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Open(t.TempDir())
			victim := filepath.Join(t.TempDir(), "victim")
			must(t, os.WriteFile(victim, []byte("precious"), 0o644))
			c.plant(t, p, victim)
			id := NewID()
			d, err := p.Records().WriteOwnerDurable(id, map[string]string{"task_id": id})
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("got %v, want %v", err, c.wantErr)
				}
				if d != nil {
					t.Fatal("a Durable with an error")
				}
				ents, _ := os.ReadDir(filepath.Dir(victim))
				if len(ents) != 1 {
					t.Fatalf("written through the link: %v", ents)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Before Wait: another reader already sees the whole record.
			var v map[string]string
			must(t, p.Records().ReadOwner(id, &v))
			if v["task_id"] != id {
				t.Fatalf("read %v", v)
			}
			must(t, d.Wait())
			must(t, d.Wait()) // again: the same answer
			ents, err := os.ReadDir(p.RecordsDir())
			must(t, err)
			if len(ents) != 1 || ents[0].Name() != id+ownerSuffix {
				t.Fatalf("records directory holds %v, want only the owner record", ents)
			}
		})
	}
	var none *Durable
	if err := none.Wait(); err != nil {
		t.Fatalf("nil Durable: %v", err)
	}
	if _, err := Open(t.TempDir()).Records().WriteOwnerDurable("../x", 1); err == nil {
		t.Fatal("a bad id was written")
	}
}
