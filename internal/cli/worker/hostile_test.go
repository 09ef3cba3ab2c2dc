package worker_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/engine/temporal/devserver"
)

// TestHostileSubmissionRunsNothingOnTheWorker is issue 23's first case
// through a real `brood worker`: a submitter that writes its own workflow
// input (not brood's submitter, whose checks it does not run) names a
// remote, or a base commit, of the form `--upload-pack=:;touch MARKER`.
// The worker refuses the call with a line saying why, and MARKER never
// appears.
func TestHostileSubmissionRunsNothingOnTheWorker(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("hostile-%d", os.Getpid())
	store := "file://" + t.TempDir()
	startBrood(t, workerProject(t, cliScript), nil, "brood worker: task queue",
		"worker", "--concurrency", "1", "--temporal", srv.Addr, "--task-queue", queue, "--store", store)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	blobs, err := blobstore.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := codesnap.Capture(ctx, blobs, pushedRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	if snap.Bundle != nil {
		t.Fatal("the base is pushed: the snapshot should carry no bundle")
	}
	c, err := temporal.Dial(ctx, temporal.ClientOptions{HostPort: srv.Addr, ClaimStore: blobs})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		name, want string
		edit       func(s *codesnap.Snapshot, marker string)
	}{
		{"remote", "fetches from no remote of that repository", func(s *codesnap.Snapshot, marker string) {
			s.Remote = "--upload-pack=:;touch " + marker
		}},
		{"base", "snapshot base", func(s *codesnap.Snapshot, marker string) {
			s.Base = "--upload-pack=:;touch " + marker
		}},
		{"branch", "snapshot branch", func(s *codesnap.Snapshot, marker string) {
			s.Branch = "--upload-pack=:;touch " + marker
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "MARKER")
			s := *snap
			tc.edit(&s, marker)
			id := dispatch.NewID()
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "brood-call-" + id, TaskQueue: queue}, temporal.CallWorkflowName,
				temporal.CallInputW{Spec: call.Spec{Agent: "explore", Prompt: "answer yes", TaskID: id}, Queue: queue, Code: &s,
					Limits: temporal.CallLimits{Heartbeat: 10 * time.Second, Timeout: time.Minute, KillGrace: 2 * time.Second, Attempts: 1}})
			if err != nil {
				t.Fatal(err)
			}
			var out temporal.CallOutput
			err = run.Get(ctx, &out)
			if _, serr := os.Stat(marker); serr == nil {
				t.Fatal("the submitter's --upload-pack ran on the worker")
			}
			// Refused: the workflow fails, or the call ends failed with
			// the worker's reason, before any child ran.
			why := out.Error
			if err != nil {
				why = err.Error()
			} else if out.Status != dispatch.StatusFailed || out.Process != nil {
				t.Fatalf("the worker ran the call: %+v", out.Result)
			}
			if !strings.Contains(why, tc.want) {
				t.Fatalf("refused with %q, want it to say %q", why, tc.want)
			}
		})
	}
}

// pushedRepo is a repository whose HEAD is pushed to a bare origin beside
// it: its snapshot names the remote and carries no bundle.
func pushedRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	repo, origin := filepath.Join(root, "repo"), filepath.Join(root, "origin.git")
	run := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
			"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(root, "init", "-q", "--bare", "-b", "main", origin)
	run(root, "init", "-q", "-b", "main", repo)
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(repo, "add", "-A")
	run(repo, "commit", "-q", "-m", "first")
	run(repo, "remote", "add", "origin", origin)
	run(repo, "push", "-q", "-u", "origin", "main")
	return repo
}
