package spec

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ClientSettings are the Kafka consumer properties of client_properties
// the agent honours, parsed; a zero field keeps the agent's
// default.
type ClientSettings struct {
	// ClientID is client.id, sent with every request.
	ClientID string
	// FetchMinBytes is fetch.min.bytes, FetchMaxBytes fetch.max.bytes,
	// PartitionFetchMaxBytes max.partition.fetch.bytes and FetchMaxWait
	// fetch.max.wait.ms of a fetch request.
	FetchMinBytes          int32
	FetchMaxBytes          int32
	PartitionFetchMaxBytes int32
	FetchMaxWait           time.Duration
	// MetadataMaxAge is metadata.max.age.ms: how long partition
	// leadership is cached.
	MetadataMaxAge time.Duration
	// RequestTimeout is request.timeout.ms.
	RequestTimeout time.Duration
	// ConnectTimeout is socket.connection.setup.timeout.ms.
	ConnectTimeout time.Duration
}

// clientProperty is one supported key of client_properties: a whole
// number from lo to hi, stored by set. Keys ending in ".ms" are
// milliseconds.
type clientProperty struct {
	key    string
	lo, hi int64
	set    func(cs *ClientSettings, v int64)
}

// maxFetchBytes bounds the byte sizes of a fetch: 1 GiB.
const maxFetchBytes = 1 << 30

// clientIDKey is the one client property that is a string.
const clientIDKey = "client.id"

// clientProperties are the numeric keys of client_properties, sorted.
var clientProperties = []clientProperty{
	{"fetch.max.bytes", 1, maxFetchBytes, func(cs *ClientSettings, v int64) { cs.FetchMaxBytes = int32(v) }},
	{"fetch.max.wait.ms", 1, 300_000, func(cs *ClientSettings, v int64) { cs.FetchMaxWait = time.Duration(v) * time.Millisecond }},
	{"fetch.min.bytes", 1, maxFetchBytes, func(cs *ClientSettings, v int64) { cs.FetchMinBytes = int32(v) }},
	{"max.partition.fetch.bytes", 1, maxFetchBytes, func(cs *ClientSettings, v int64) { cs.PartitionFetchMaxBytes = int32(v) }},
	{"metadata.max.age.ms", 1_000, 86_400_000, func(cs *ClientSettings, v int64) { cs.MetadataMaxAge = time.Duration(v) * time.Millisecond }},
	{"request.timeout.ms", 1_000, 600_000, func(cs *ClientSettings, v int64) { cs.RequestTimeout = time.Duration(v) * time.Millisecond }},
	{"socket.connection.setup.timeout.ms", 100, 300_000, func(cs *ClientSettings, v int64) { cs.ConnectTimeout = time.Duration(v) * time.Millisecond }},
}

// ClientProperties lists the keys client_properties accepts, sorted: the
// Kafka consumer properties the agent honours.
var ClientProperties = func() []string {
	keys := []string{clientIDKey}
	for _, p := range clientProperties {
		keys = append(keys, p.key)
	}
	slices.Sort(keys)
	return keys
}()

// ClientPropertyBounds returns the accepted values of a numeric client
// property as "from lo to hi", for docs; "" for client.id or an unknown key.
func ClientPropertyBounds(key string) string {
	for _, p := range clientProperties {
		if p.key == key {
			return fmt.Sprintf("from %d to %d", p.lo, p.hi)
		}
	}
	return ""
}

// clientPropertyElsewhere maps consumer properties that have an attribute
// of their own to that attribute.
var clientPropertyElsewhere = map[string]string{
	"group.id":           "group_id (or group_id_prefix)",
	"auto.offset.reset":  "starting_offset and auto_offset_reset",
	"isolation.level":    "isolation_level",
	"bootstrap.servers":  "bootstrap_servers of the tributary_connection",
	"security.protocol":  "the security settings of the tributary_connection",
	"key.deserializer":   "key_transformer",
	"value.deserializer": "value_transformer",
	"compression.type":   "compression of a tributary_kafka_sink (a producer setting)",
}

// cloudMechanisms names the mechanisms of the agent's cloud identities,
// for messages.
const cloudMechanisms = "sasl.mechanism AWS_MSK_IAM, AZURE_EVENT_HUBS_ENTRA_ID or GCP_MANAGED_KAFKA_IAM"

// clientPropertySecurity maps the security properties of Java's Kafka
// client, many of them Java classes or files, to the attributes of the
// tributary_connection that say the same.
var clientPropertySecurity = map[string]string{
	"sasl.mechanism": "sasl.mechanism",
	"sasl.jaas.config": "the sasl block: username and password (PLAIN, SCRAM), oauth (OAUTHBEARER), or " + cloudMechanisms +
		" instead of a cloud login module",
	"sasl.login.callback.handler.class": "sasl.oauth (token_endpoint_url, client_id, client_secret, scope) instead of " +
		"Kafka's OAuthBearerLoginCallbackHandler, or " + cloudMechanisms + " instead of a cloud's callback handler",
	"sasl.client.callback.handler.class": cloudMechanisms + " instead of a cloud's callback handler (such as " +
		"IAMClientCallbackHandler), or the sasl block's credentials",
	"sasl.login.class":                                  "the sasl block (the agent has its own login for each mechanism)",
	"sasl.oauthbearer.token.endpoint.url":               "sasl.oauth.token_endpoint_url",
	"sasl.oauthbearer.scope":                            "sasl.oauth.scope",
	"sasl.oauthbearer.client.credentials.client.id":     "sasl.oauth.client_id",
	"sasl.oauthbearer.client.credentials.client.secret": "sasl.oauth.client_secret (or client_secret_wo)",
	"ssl.truststore.location":                           "tls.ca_pem (the trust store's CA certificates as PEM)",
	"ssl.truststore.certificates":                       "tls.ca_pem",
	"ssl.truststore.password":                           "tls.ca_pem (a PEM CA needs no password)",
	"ssl.truststore.type":                               "tls.ca_pem (PEM)",
	"ssl.keystore.location":                             "tls.keystore_p12_base64 (a PKCS#12 store) or tls.cert_pem and tls.key_pem",
	"ssl.keystore.password":                             "tls.keystore_password",
	"ssl.key.password":                                  "tls.keystore_password (the store and its key share it) or tls.key_pem",
	"ssl.keystore.type":                                 "tls.keystore_p12_base64 (PKCS12) or tls.cert_pem and tls.key_pem (PEM)",
	"ssl.keystore.certificate.chain":                    "tls.cert_pem",
	"ssl.keystore.key":                                  "tls.key_pem",
	"ssl.endpoint.identification.algorithm":             "tls.server_name, or tls.insecure_skip_verify for tests",
}

// clientPropertiesOfMembership are consumer properties of group
// membership, which the agent never has.
var clientPropertiesOfMembership = []string{
	"session.timeout.ms", "heartbeat.interval.ms", "enable.auto.commit", "auto.commit.interval.ms",
	"max.poll.interval.ms", "partition.assignment.strategy", "group.instance.id", "group.protocol",
	"group.remote.assignor",
}

// clientPropertyProblem says what is wrong with key as a key of
// client_properties; "" when the agent honours it.
func clientPropertyProblem(key string) string {
	switch {
	case slices.Contains(ClientProperties, key):
		return ""
	case strings.HasPrefix(key, "kafka."), strings.HasPrefix(key, "properties."):
		// Spark's and Flink's spelling of a consumer property.
		bare := key[strings.Index(key, ".")+1:]
		if msg := clientPropertyProblem(bare); msg != "" {
			return fmt.Sprintf("key %q: without Spark's \"kafka.\" or Flink's \"properties.\" prefix, %s", key, msg)
		}
		return fmt.Sprintf("key %q: write the Kafka property without Spark's \"kafka.\" or Flink's \"properties.\" prefix, as %q", key, bare)
	case clientPropertySecurity[key] != "":
		return fmt.Sprintf("key %q is not a client property here: set %s of the tributary_connection", key, clientPropertySecurity[key])
	case strings.HasPrefix(key, "sasl.kerberos."):
		return fmt.Sprintf("key %q is not supported: the agent has no Kerberos (GSSAPI); set sasl.mechanism of the tributary_connection "+
			"to one the brokers also enable", key)
	case strings.HasPrefix(key, "sasl.") || strings.HasPrefix(key, "ssl."):
		return fmt.Sprintf("key %q is not a client property here: set it with the security settings of the tributary_connection", key)
	case slices.Contains(clientPropertiesOfMembership, key):
		return fmt.Sprintf("key %q is not supported: the agent does not join the consumer group (it commits offsets for lag tools only)", key)
	}
	if attr, ok := clientPropertyElsewhere[key]; ok {
		return fmt.Sprintf("key %q is not a client property here: set %s instead", key, attr)
	}
	return fmt.Sprintf("key %q is not supported; the supported keys are %s", key, strings.Join(ClientProperties, ", "))
}

// ClientSettings parses ClientProperties. Its error names the first bad
// key in key order and says what to do; Validate reports every bad key
// with the same words.
func (ko *KafkaOptions) ClientSettings() (ClientSettings, error) {
	var cs ClientSettings
	for _, key := range slices.Sorted(maps.Keys(ko.ClientProperties)) {
		if msg := parseClientProperty(&cs, key, ko.ClientProperties[key]); msg != "" {
			return ClientSettings{}, fmt.Errorf("client_properties: %s", msg)
		}
	}
	if msg := cs.conflict(); msg != "" {
		return ClientSettings{}, fmt.Errorf("client_properties: %s", msg)
	}
	return cs, nil
}

// validateClientProperties reports every bad key and value of
// client_properties on that attribute.
func (ko *KafkaOptions) validateClientProperties(col collector) {
	if ko.ClientProperties != nil && len(ko.ClientProperties) == 0 {
		// The agent stores no empty map, so Terraform would read back
		// null where the configuration says {}.
		col.add("client_properties", "client_properties is empty; remove it (or set it to null) to keep the agent's client settings")
		return
	}
	var cs ClientSettings
	ok := true
	for _, key := range slices.Sorted(maps.Keys(ko.ClientProperties)) {
		if msg := parseClientProperty(&cs, key, ko.ClientProperties[key]); msg != "" {
			col.add("client_properties", "%s", msg)
			ok = false
		}
	}
	if msg := cs.conflict(); ok && msg != "" {
		col.add("client_properties", "%s", msg)
	}
}

// parseClientProperty stores the property key = v into cs, or says what
// is wrong with it.
func parseClientProperty(cs *ClientSettings, key, v string) string {
	if msg := clientPropertyProblem(key); msg != "" {
		return msg
	}
	if key == clientIDKey {
		switch {
		case v == "":
			return fmt.Sprintf("%s is empty; remove it to keep the agent's client id", key)
		case len(v) > MaxShortStringLen:
			return fmt.Sprintf("%s is %d bytes long, more than the maximum of %d", key, len(v), MaxShortStringLen)
		}
		cs.ClientID = v
		return ""
	}
	i := slices.IndexFunc(clientProperties, func(p clientProperty) bool { return p.key == key })
	p := clientProperties[i]
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	unit := "bytes"
	if strings.HasSuffix(key, ".ms") {
		unit = "milliseconds"
	}
	switch {
	case err != nil:
		return fmt.Sprintf("%s = %q is not a whole number of %s", key, v, unit)
	case n < p.lo || n > p.hi:
		return fmt.Sprintf("%s = %d is out of range: use from %d to %d %s", key, n, p.lo, p.hi, unit)
	}
	p.set(cs, n)
	return ""
}

// conflict says which of the parsed settings contradict each other; ""
// when none do.
func (cs *ClientSettings) conflict() string {
	switch {
	case cs.FetchMinBytes > 0 && cs.FetchMaxBytes > 0 && cs.FetchMinBytes > cs.FetchMaxBytes:
		return fmt.Sprintf("fetch.min.bytes = %d is more than fetch.max.bytes = %d; lower fetch.min.bytes", cs.FetchMinBytes, cs.FetchMaxBytes)
	case cs.FetchMaxWait > 0 && cs.RequestTimeout > 0 && cs.FetchMaxWait >= cs.RequestTimeout:
		return fmt.Sprintf("fetch.max.wait.ms = %d is not less than request.timeout.ms = %d; a fetch would time out while the broker waits",
			cs.FetchMaxWait.Milliseconds(), cs.RequestTimeout.Milliseconds())
	}
	return ""
}
