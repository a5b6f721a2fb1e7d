package pipeline

// Placeholders of the Manager's fanout methods, so that the server builds
// before the fanout runtime lands; fanout_api.go of the runtime replaces
// this file.

import (
	"context"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// ApplyFanout starts fanout schema f, or updates it in place, inside its
// pipeline (which must be applied: else spec.Errors{{Path: "pipeline_name",
// ...}}). Placeholder: it runs nothing.
func (m *Manager) ApplyFanout(ctx context.Context, f *spec.FanoutSchema) error { return nil }

// CheckFanout is ApplyFanout's dry run. Placeholder: it accepts anything.
func (m *Manager) CheckFanout(f *spec.FanoutSchema) error { return nil }

// RemoveFanout stops the named fanout schema after a final flush and
// commit; its tables stay. Placeholder: there is nothing to stop.
func (m *Manager) RemoveFanout(ctx context.Context, name string) error { return nil }

// FanoutStatus reports the named fanout schema; ok is false when it does
// not run. Placeholder: it never runs.
func (m *Manager) FanoutStatus(name string) (spec.FanoutStatus, bool) {
	return spec.FanoutStatus{}, false
}
