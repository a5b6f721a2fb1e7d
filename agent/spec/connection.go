package spec

import (
	"net"
	"strconv"
)

// Connection is how an agent reaches one Kafka cluster. Pipelines refer to it
// by Name. Authentication, TLS, the schema registry and client properties are
// added here as optional blocks (each with its own Validate), so a connection
// without them keeps meaning PLAINTEXT with no registry.
type Connection struct {
	// Name identifies the connection on the agent; see [ValidName].
	Name string `json:"name"`
	// BootstrapServers lists "host:port" addresses of brokers to bootstrap
	// from, roughly equivalent to Kafka's bootstrap.servers.
	BootstrapServers []string `json:"bootstrap_servers"`
}

// Validate returns every problem with c.
func (c *Connection) Validate() Errors {
	col := newCollector()
	validateName(col, "name", c.Name)
	if len(c.BootstrapServers) == 0 {
		col.add("bootstrap_servers", "at least one bootstrap server is required, e.g. \"broker1:9092\"")
	}
	for i, s := range c.BootstrapServers {
		host, port, err := net.SplitHostPort(s)
		p := col.index("bootstrap_servers", i)
		if err != nil || host == "" {
			p.add("", "%q is not a host:port address, e.g. \"broker1:9092\"", s)
			continue
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			p.add("", "%q has port %q; a port is a number from 1 to 65535", s, port)
		}
	}
	return *col.errs
}
