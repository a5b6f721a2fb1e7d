package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestRefusedCredentialsReachStatus checks that a connection the brokers
// refuse shows in the table's last_error, naming the connection and the
// cause, without the password.
func TestRefusedCredentialsReachStatus(t *testing.T) {
	const password = "right-Secret-pw"
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "events"), kfake.EnableSASL(),
		kfake.Superuser(spec.SASLScram512, "ingest", password))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	conn := &spec.Connection{Name: "c", BootstrapServers: c.ListenAddrs(), SecurityProtocol: spec.ProtocolSASLPlaintext,
		SASL: &spec.SASL{Mechanism: spec.SASLScram512, Username: "ingest", Password: "wrong-" + password}}
	m := NewManager(Config{Warehouse: t.TempDir()})
	t.Cleanup(func() { m.Close(context.Background()) })
	if err := m.Apply(context.Background(), testPipeline("events"), conn, nil); err != nil {
		t.Fatal(err)
	}
	var last string
	waitFor(t, 10*time.Second, "the refusal in last_error", func() bool {
		st, _ := m.Status("p")
		last = st.Tables[0].LastError
		return strings.Contains(last, `connection "c": the brokers refused the SASL SCRAM-SHA-512 credentials of user "ingest"`)
	})
	if strings.Contains(last, password) {
		t.Errorf("last_error %q quotes the password", last)
	}
}
