package temporal_test

import (
	"context"
	"io"
	"log/slog"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/broodhq/brood/internal/engine/temporal"
)

// rpcTimes times a client's RPCs to the server by method ("rpc:
// RespondActivityTaskCompleted"), and the worker's side of each task it
// polled: from the poll's return to the task's response ("worker:
// workflow task", "worker: activity task"), matched by task token. Polls
// are waiting, not work: they are counted ("poll: PollActivityTaskQueue (a
// task)" or "(none)", n= is how many the server answered), and only the
// tasks they return are timed as work.
type rpcTimes struct {
	t      *temporal.CallTimes
	mu     sync.Mutex
	polled map[string]time.Time
}

type tokened interface{ GetTaskToken() []byte }

type scheduled interface {
	GetScheduledTime() *timestamppb.Timestamp
}

// queueWait splits a polled task's wait between its schedule and the
// poll's return by who was there first: a task scheduled before the poll
// was sent waited for a poller ("no poller": the worker's side); after
// both were there, the rest is the server's matching ("matched").
func (r *rpcTimes) queueWait(name string, sent, sched time.Time) {
	now := time.Now()
	if sched.Before(sent) {
		r.t.Add("queue: "+name+": no poller (scheduled to poll sent)", sent.Sub(sched))
		r.t.Add("queue: "+name+": matched (poll sent to returned)", now.Sub(sent))
		return
	}
	r.t.Add("queue: "+name+": poller waiting (poll sent to scheduled)", sched.Sub(sent))
	r.t.Add("queue: "+name+": matched (scheduled to poll returned)", now.Sub(sched))
}

func (r *rpcTimes) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	name := path.Base(method)
	if strings.HasPrefix(name, "Poll") {
		at := time.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		if tk, ok := reply.(tokened); ok && err == nil && len(tk.GetTaskToken()) > 0 {
			r.mu.Lock()
			r.polled[string(tk.GetTaskToken())] = time.Now()
			r.mu.Unlock()
			r.t.Add("poll: "+name+" (a task)", time.Since(at))
			if st, ok := reply.(scheduled); ok && st.GetScheduledTime() != nil {
				r.queueWait(name, at, st.GetScheduledTime().AsTime())
			}
		} else {
			// Counted (n=): each is a request the server answers.
			r.t.Add("poll: "+name+" (none)", time.Since(at))
		}
		return err
	}
	at := time.Now()
	if tk, ok := req.(tokened); ok && strings.HasPrefix(name, "Respond") {
		r.mu.Lock()
		p, seen := r.polled[string(tk.GetTaskToken())]
		delete(r.polled, string(tk.GetTaskToken()))
		r.mu.Unlock()
		if seen {
			kind := "activity task"
			if strings.Contains(name, "WorkflowTask") {
				kind = "workflow task"
			}
			r.t.Add("worker: "+kind+" (poll to response)", at.Sub(p))
		}
	}
	err := invoker(ctx, method, req, reply, cc, opts...)
	if name != "GetWorkflowExecutionHistory" { // the submitter's long poll
		r.t.Add("rpc: "+name, time.Since(at))
	}
	return err
}

// timedClient is a client of addr whose RPCs are timed into t.
func timedClient(tb testing.TB, addr string, t *temporal.CallTimes) client.Client {
	tb.Helper()
	r := &rpcTimes{t: t, polled: map[string]time.Time{}}
	return interceptedClient(tb, addr, r.intercept)
}

// interceptedClient is a quiet client of addr whose every unary RPC goes
// through in.
func interceptedClient(tb testing.TB, addr string, in grpc.UnaryClientInterceptor) client.Client {
	tb.Helper()
	c, err := client.Dial(client.Options{HostPort: addr,
		Logger: tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(in)},
			GrpcCompression: temporal.Compression(addr)}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return c
}
