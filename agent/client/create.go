package client

import (
	"context"
	"errors"
	"net/http"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// ErrExists is returned (wrapped in an [*APIError], status 412) by the
// Create methods when the agent already has an object of that name. Test
// with errors.Is.
var ErrExists = errors.New("already exists")

// Is makes errors.Is(err, ErrExists) true for the 412 of a create.
func (e *APIError) Is(target error) bool {
	return target == ErrExists && e.Status == http.StatusPreconditionFailed
}

// createOnly is the context key that makes a PUT a create: it carries
// If-None-Match: *, and is retried only when no answer arrived.
type createOnly struct{}

// asCreate marks ctx as that of a create (see createOnly).
func asCreate(ctx context.Context) context.Context { return context.WithValue(ctx, createOnly{}, true) }

// isCreate reports whether ctx is that of a create.
func isCreate(ctx context.Context) bool { return ctx.Value(createOnly{}) != nil }

// CreateConnection stores a new connection, as PutConnection does, but
// never replaces one: when the agent has a connection of that name it
// answers [ErrExists] and changes nothing (a PUT with If-None-Match: *).
//
// A create is retried only when no answer arrived (the agent is starting,
// say), not after a 5xx: the agent did act on the request, and a retry
// would meet the object it stored. An answer lost on the way back, then
// retried, can therefore report ErrExists for the caller's own object.
func (c *Client) CreateConnection(ctx context.Context, conn *spec.Connection) (*spec.Connection, error) {
	return c.PutConnection(asCreate(ctx), conn)
}

// CreatePipeline starts a new pipeline, as PutPipeline does, but never
// replaces one: [ErrExists] when the agent has a pipeline of that name.
// It is retried as [Client.CreateConnection] is.
func (c *Client) CreatePipeline(ctx context.Context, p *spec.Pipeline) (*spec.PipelineResponse, error) {
	return c.PutPipeline(asCreate(ctx), p)
}

// CreateFanoutSchema starts a new fanout schema, as PutFanoutSchema does,
// but never replaces one: [ErrExists] when the agent has a fanout schema
// of that name. It is retried as [Client.CreateConnection] is.
func (c *Client) CreateFanoutSchema(ctx context.Context, f *spec.FanoutSchema) (*spec.FanoutSchemaResponse, error) {
	return c.PutFanoutSchema(asCreate(ctx), f)
}
