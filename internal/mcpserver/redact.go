package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/broodhq/brood/internal/jsonstr"
)

// redacting is the middleware that passes every string of every reply and
// notification the server sends through redact (Config.Redact): a Task's
// result, TaskOutput, a resource's content, a progress message. Such a
// message leaves this process for another program (and its model, and its
// logs); a secret a subagent read on its way goes out as its marker. A
// reply that cannot be redacted is not sent: the client gets an error.
func redacting(redact func(string) string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil || res == nil || reflect.ValueOf(res).IsNil() {
				return res, err
			}
			return redactResult(res, redact)
		}
	}
}

// redactResult returns res with redact applied to every string in it (res
// itself when nothing changed).
func redactResult(res mcp.Result, redact func(string) string) (mcp.Result, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("brood mcp: cannot encode the %T to redact it: %w", res, err)
	}
	out := jsonstr.Map(b, redact)
	if bytes.Equal(out, b) {
		return res, nil
	}
	t := reflect.TypeOf(res)
	if t.Kind() != reflect.Pointer {
		return nil, fmt.Errorf("brood mcp: cannot redact a %T", res)
	}
	v, ok := reflect.New(t.Elem()).Interface().(mcp.Result)
	if !ok || json.Unmarshal(out, v) != nil {
		return nil, fmt.Errorf("brood mcp: cannot redact a %T", res)
	}
	return v, nil
}

// redactNotify redacts what the server sends on its own (progress
// notifications, log messages): on the sending side, the parameters of
// each message are redacted in place before it goes.
func redactNotify(redact func(string) string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
				b, err := json.Marshal(p)
				if err != nil {
					return nil, fmt.Errorf("brood mcp: cannot encode the %s to redact it: %w", method, err)
				}
				if out := jsonstr.Map(b, redact); !bytes.Equal(out, b) {
					if err := json.Unmarshal(out, p); err != nil {
						return nil, fmt.Errorf("brood mcp: cannot redact the %s: %w", method, err)
					}
				}
			}
			return next(ctx, method, req)
		}
	}
}
