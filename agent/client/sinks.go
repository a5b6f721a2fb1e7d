package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// PutKafkaSink creates or replaces a Kafka sink, whose connection must
// exist, and returns it as stored with its status. With [CreateOnly] it
// only creates.
func (c *Client) PutKafkaSink(ctx context.Context, k *spec.KafkaSink) (*spec.KafkaSinkResponse, error) {
	var out spec.KafkaSinkResponse
	return &out, c.do(ctx, http.MethodPut, sinkPath(k.Name), k, &out)
}

// DryRunKafkaSink asks the agent whether PutKafkaSink would accept k,
// without changing anything (POST /v1/kafka-sinks/{name}/dry-run), as
// [Client.DryRunPipeline] does for a pipeline: the answer is k as the agent
// would store it, or the [*APIError] a PUT would get. It is tried once.
func (c *Client) DryRunKafkaSink(ctx context.Context, k *spec.KafkaSink) (*spec.KafkaSink, error) {
	return dryRun(ctx, c, sinkPath(k.Name), k)
}

// GetKafkaSink returns the named Kafka sink's spec and status;
// errors.Is(err, ErrNotFound) when it does not exist.
func (c *Client) GetKafkaSink(ctx context.Context, name string) (*spec.KafkaSinkResponse, error) {
	var out spec.KafkaSinkResponse
	return &out, c.do(ctx, http.MethodGet, sinkPath(name), nil, &out)
}

// ListKafkaSinks returns every Kafka sink of the agent, by name, each with
// its status.
func (c *Client) ListKafkaSinks(ctx context.Context) ([]spec.KafkaSinkResponse, error) {
	var out []spec.KafkaSinkResponse
	return out, c.do(ctx, http.MethodGet, "/v1/kafka-sinks", nil, &out)
}

// DeleteKafkaSink stops the named Kafka sink and forgets it; its consumer
// group, which holds its source positions, stays. Deleting one that does
// not exist is not an error.
func (c *Client) DeleteKafkaSink(ctx context.Context, name string) error {
	return ignoreNotFound(c.do(ctx, http.MethodDelete, sinkPath(name), nil, nil))
}

func sinkPath(name string) string { return "/v1/kafka-sinks/" + url.PathEscape(name) }
