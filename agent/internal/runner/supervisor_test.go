package runner_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestStopDuringRead: a stop that cuts short a read of the attempt (it was
// starting, reading metadata) leaves the runner STOPPED without an error,
// while an attempt that fails on stopping for another reason (its final
// flush) says why.
func TestStopDuringRead(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  func(ctx context.Context) error
		want string
	}{
		{"read cut short", func(ctx context.Context) error { return fmt.Errorf("read metadata: %w", ctx.Err()) }, ""},
		{"final flush failed", func(context.Context) error { return errors.New("commit: disk full") }, "commit: disk full"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := runner.NewSupervisor("table", "restarts", time.Second, slog.New(slog.DiscardHandler))
			started := make(chan struct{})
			s.Start(context.Background(), func(ctx context.Context) error {
				close(started)
				<-ctx.Done()
				return tt.err(ctx)
			}, func(err error) (runner.Failure, error) { return runner.Fail, err })
			<-started
			s.Stop()
			if state, lastErr := s.Status(); state != spec.StateStopped || lastErr != tt.want {
				t.Errorf("after Stop: %s with %q, want STOPPED with %q", state, lastErr, tt.want)
			}
		})
	}
}
