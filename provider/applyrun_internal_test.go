package provider

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
)

// A create whose PUT fails although the agent stored the object (a 500
// "saved but did not start", or no answer) puts the object in the state,
// so that Terraform tracks and replaces it rather than meeting it on the
// next create; a refusal (4xx), or an object the agent does not have,
// leaves the state empty.
func TestApplyRunTracksStoredObject(t *testing.T) {
	t.Parallel()
	type model struct {
		ID types.String `tfsdk:"id"`
	}
	ctx := context.Background()
	s := schema.Schema{Attributes: map[string]schema.Attribute{"id": schema.StringAttribute{Computed: true}}}
	null := tftypes.NewValue(s.Type().TerraformType(ctx), nil)
	tests := []struct {
		name      string
		putErr    error
		stored    bool
		wantState bool
	}{
		{"saved but did not start", &client.APIError{Status: http.StatusInternalServerError, Title: "Internal Server Error"}, true, true},
		{"no answer", errors.New("no answer within 1m0s"), true, true},
		{"refused", &client.APIError{Status: http.StatusUnprocessableEntity, Title: "Unprocessable Entity"}, true, false},
		{"not stored", &client.APIError{Status: http.StatusInternalServerError, Title: "Internal Server Error"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			state := tfsdk.State{Schema: s, Raw: null}
			m := model{ID: types.StringUnknown()}
			var diags diag.Diagnostics
			applyRun(ctx, agentRun{
				what: "pipeline", title: "Pipeline", name: "p",
				files:    func(func(*schemaFile)) {},
				put:      func(context.Context) error { return tt.putErr },
				wait:     func(context.Context) error { t.Error("wait after a failed put"); return nil },
				stored:   func(context.Context) bool { return tt.stored },
				accepted: func() { m.ID = types.StringValue("p") },
			}, tfsdk.Plan{Schema: s, Raw: null}, time.Minute, &m, &state, &diags)
			if !diags.HasError() {
				t.Fatalf("diagnostics %v, want the put's error", diags)
			}
			var got model
			if !state.Raw.IsNull() {
				if d := state.Get(ctx, &got); d.HasError() {
					t.Fatal(d)
				}
			}
			if tracked := got.ID.ValueString() == "p"; tracked != tt.wantState {
				t.Fatalf("state %v after a put that failed with %v, want tracked = %v", state.Raw, tt.putErr, tt.wantState)
			}
		})
	}
}
