package client

import (
	"context"
	"errors"
	"net/http"
)

// ErrExists is returned (wrapped in an [*APIError], status 412) by a PUT
// under [CreateOnly] when the agent already has an object of that name.
// Test with errors.Is.
var ErrExists = errors.New("already exists")

// Is makes errors.Is(err, ErrExists) true for the 412 of a create.
func (e *APIError) Is(target error) bool {
	return target == ErrExists && e.Status == http.StatusPreconditionFailed
}

// createOnly is the context key of [CreateOnly].
type createOnly struct{}

// CreateOnly returns ctx for creates: every Put method called with it
// (PutConnection, PutPipeline, PutFanoutSchema) stores a new object but
// never replaces one. When the agent has an object of that name it answers
// [ErrExists] and changes nothing: the PUT carries If-None-Match: *. A dry
// run under ctx checks a create likewise. Other requests under ctx are
// sent as usual.
//
// A create is retried only when the connection to the agent could not be
// made (the agent is starting, say): not after an answer, even a 5xx, nor
// after a timeout or a connection lost mid-request, as the agent may have
// acted on the request (a pipeline that was stored but did not start), and
// a retry would meet the object it stored and report ErrExists for the
// caller's own object.
func CreateOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, createOnly{}, true)
}

// isCreate reports whether a request of method under ctx is a create (a
// PUT) or its dry run (the only POSTs).
func isCreate(ctx context.Context, method string) bool {
	return (method == http.MethodPut || method == http.MethodPost) && ctx.Value(createOnly{}) != nil
}
