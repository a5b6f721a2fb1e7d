package server

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

var update = flag.Bool("update", false, "rewrite openapi.json from the route list and the spec types")

// operation documents one method of one route.
type operation struct {
	summary string
	// body is the type of the request body, nil for none.
	body reflect.Type
	// status and answer are the success status and the type of its JSON
	// body (nil for none, or for text).
	status int
	answer reflect.Type
	// text is the content type of a non-JSON answer.
	text string
}

// operations documents every route, keyed by "METHOD path".
var operations = map[string]operation{
	"GET /healthz":      {summary: "Liveness; needs no token", status: 200, answer: reflect.TypeFor[map[string]string]()},
	"GET /openapi.json": {summary: "This document; needs no token", status: 200, answer: reflect.TypeFor[map[string]any]()},
	"GET /metrics":      {summary: "Metrics in the Prometheus text format", status: 200, text: "text/plain"},

	"GET /v1/connections":           {summary: "Every connection, by name; secrets are never returned", status: 200, answer: reflect.TypeFor[[]spec.Connection]()},
	"GET /v1/connections/{name}":    {summary: "One connection; secrets_set lists the secrets that are set", status: 200, answer: reflect.TypeFor[spec.Connection]()},
	"PUT /v1/connections/{name}":    {summary: "Create or replace a connection", body: reflect.TypeFor[spec.Connection](), status: 200, answer: reflect.TypeFor[spec.Connection]()},
	"DELETE /v1/connections/{name}": {summary: "Delete a connection no pipeline uses", status: 204},

	"GET /v1/catalogs":           {summary: "Every catalog, by name; secrets are never returned", status: 200, answer: reflect.TypeFor[[]spec.Catalog]()},
	"GET /v1/catalogs/{name}":    {summary: "One catalog; secrets_set lists the secrets that are set", status: 200, answer: reflect.TypeFor[spec.Catalog]()},
	"PUT /v1/catalogs/{name}":    {summary: "Create or replace a catalog; the tables of its destination_catalog restart registered in it", body: reflect.TypeFor[spec.Catalog](), status: 200, answer: reflect.TypeFor[spec.Catalog]()},
	"DELETE /v1/catalogs/{name}": {summary: "Stop registering the catalog's tables; with on_delete = DROP_REGISTRATION drop their registrations (never their files)", status: 204},

	"GET /v1/pipelines":                 {summary: "Every pipeline, by name, with its status", status: 200, answer: reflect.TypeFor[[]spec.PipelineResponse]()},
	"GET /v1/pipelines/{name}":          {summary: "One pipeline with its status", status: 200, answer: reflect.TypeFor[spec.PipelineResponse]()},
	"PUT /v1/pipelines/{name}":          {summary: "Create or replace a pipeline", body: reflect.TypeFor[spec.Pipeline](), status: 200, answer: reflect.TypeFor[spec.PipelineResponse]()},
	"DELETE /v1/pipelines/{name}":       {summary: "Stop and forget a pipeline; its tables stay", status: 204},
	"POST /v1/pipelines/{name}/dry-run": {summary: "Every check of a PUT; changes nothing", body: reflect.TypeFor[spec.Pipeline](), status: 200, answer: reflect.TypeFor[spec.Pipeline]()},
	"POST /v1/pipelines/{name}/runs": {summary: "Start the next run of a triggered pipeline whose last run is over (IDLE); " +
		"409 while a run is in progress, after a failure, or for a continuous pipeline", status: 202, answer: reflect.TypeFor[spec.PipelineResponse]()},

	"GET /v1/fanout-schemas":                 {summary: "Every fanout schema, by name, with its status", status: 200, answer: reflect.TypeFor[[]spec.FanoutSchemaResponse]()},
	"GET /v1/fanout-schemas/{name}":          {summary: "One fanout schema with its status", status: 200, answer: reflect.TypeFor[spec.FanoutSchemaResponse]()},
	"PUT /v1/fanout-schemas/{name}":          {summary: "Create or replace a fanout schema", body: reflect.TypeFor[spec.FanoutSchema](), status: 200, answer: reflect.TypeFor[spec.FanoutSchemaResponse]()},
	"DELETE /v1/fanout-schemas/{name}":       {summary: "Stop and forget a fanout schema; its tables stay", status: 204},
	"POST /v1/fanout-schemas/{name}/dry-run": {summary: "Every check of a PUT; changes nothing", body: reflect.TypeFor[spec.FanoutSchema](), status: 200, answer: reflect.TypeFor[spec.FanoutSchema]()},

	"GET /v1/kafka-sinks":                 {summary: "Every Kafka sink, by name, with its status", status: 200, answer: reflect.TypeFor[[]spec.KafkaSinkResponse]()},
	"GET /v1/kafka-sinks/{name}":          {summary: "One Kafka sink with its status", status: 200, answer: reflect.TypeFor[spec.KafkaSinkResponse]()},
	"PUT /v1/kafka-sinks/{name}":          {summary: "Create or replace a Kafka sink", body: reflect.TypeFor[spec.KafkaSink](), status: 200, answer: reflect.TypeFor[spec.KafkaSinkResponse]()},
	"DELETE /v1/kafka-sinks/{name}":       {summary: "Stop and forget a Kafka sink; its consumer group stays", status: 204},
	"POST /v1/kafka-sinks/{name}/dry-run": {summary: "Every check of a PUT; changes nothing", body: reflect.TypeFor[spec.KafkaSink](), status: 200, answer: reflect.TypeFor[spec.KafkaSink]()},
}

// Patterns of names, as spec.ValidName, spec.ValidIdentifier and
// spec.ValidTopic check them.
const (
	namePattern       = `^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`
	identifierPattern = `^[A-Za-z_][A-Za-z0-9_]{0,254}$`
	topicPattern      = `^[A-Za-z0-9._-]{1,249}$`
)

// constraints adds to the schema of an attribute, keyed by
// "Struct.attribute", what the agent checks of it, so that generated
// requests (schemathesis) get past validation to the engine.
var constraints = map[string]map[string]any{
	"Connection.name":              {"pattern": namePattern},
	"Connection.bootstrap_servers": {"minItems": 1, "items": map[string]any{"type": "string", "pattern": `^[^\s:/]+:[0-9]{1,5}$`}},
	"Connection.security_protocol": {"enum": []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}},
	"SASL.mechanism": {"enum": []string{spec.SASLPlain, spec.SASLScram256, spec.SASLScram512, spec.SASLOAuthBearer, spec.SASLAWSMSKIAM,
		spec.SASLAzureEntraID, spec.SASLGCPIAM}},
	"Pipeline.name":                              {"pattern": namePattern},
	"Pipeline.connection_name":                   {"pattern": namePattern},
	"Pipeline.destination_catalog":               {"pattern": identifierPattern},
	"Pipeline.destination_schema":                {"pattern": identifierPattern},
	"Pipeline.storage_location":                  {"maxLength": spec.MaxStorageLocationLen},
	"Pipeline.flush_interval":                    {"pattern": `^[1-9][0-9]{0,3}(ms|s|m|h)$`},
	"Pipeline.target_file_size_mb":               {"minimum": 1, "maximum": spec.MaxTargetFileSizeMB},
	"Pipeline.max_rows_per_file":                 {"minimum": 1, "maximum": spec.MaxRowsPerFileLimit},
	"Pipeline.table":                             {"maxItems": spec.MaxTablesPerPipeline},
	"Table.destination_table":                    {"pattern": identifierPattern},
	"KafkaOptions.topics":                        {"maxItems": spec.MaxTopics, "items": map[string]any{"type": "string", "pattern": topicPattern}},
	"KafkaOptions.topic_pattern":                 {"maxLength": spec.MaxTopicPatternLen},
	"KafkaOptions.starting_offset":               {"enum": spec.StartingOffsets},
	"KafkaOptions.isolation_level":               {"enum": spec.IsolationLevels},
	"Transformer.format":                         {"enum": spec.Formats},
	"JSONOptions.schema_evolution_mode":          {"enum": spec.SchemaEvolutionModes},
	"JSONOptions.infer_records_per_partition":    {"minimum": 1, "maximum": spec.MaxInferRecordsPerPartition},
	"JSONOptions.timestamp_format":               {"maxLength": spec.MaxShortStringLen},
	"JSONOptions.date_format":                    {"maxLength": spec.MaxShortStringLen},
	"AvroOptions.parse_mode":                     {"enum": spec.ParseModes},
	"ProtobufOptions.parse_mode":                 {"enum": spec.ParseModes},
	"ProtobufOptions.recursive_fields_max_depth": {"minimum": spec.MinRecursiveDepth, "maximum": spec.MaxRecursiveDepth},
	"ConfluentOptions.subject":                   {"minLength": 1, "maxLength": spec.MaxShortStringLen},
	"SchemaRegistryOptions.connection_name":      {"pattern": namePattern},
	"FanoutSchema.name":                          {"pattern": namePattern},
	"FanoutSchema.pipeline_name":                 {"pattern": namePattern},
	"FanoutSchema.destination_catalog":           {"pattern": identifierPattern},
	"FanoutSchema.destination_schema":            {"pattern": identifierPattern},
	"FanoutOptions.fanout_by":                    {"maxLength": spec.MaxFanoutByLen},
	"FanoutOptions.table_id_fields":              {"maxItems": spec.MaxTableIDFields},
	"FanoutOptions.transforms":                   {"maxItems": 1},
	"FanoutOptions.on_invalid_route":             {"enum": spec.OnInvalidRoutes},
	"FanoutTransform.format":                     {"enum": []string{spec.FormatJSON}},
	"FanoutTransform.input_column":               {"enum": []string{spec.KeyColumn, spec.ValueColumn}},
	"KafkaSink.name":                             {"pattern": namePattern},
	"KafkaSink.connection_name":                  {"pattern": namePattern},
	"KafkaSink.topic":                            {"pattern": topicPattern},
	"KafkaSink.partition_strategy":               {"enum": spec.PartitionStrategies},
	"KafkaSink.value_format":                     {"enum": spec.SinkFormats},
	"KafkaSink.compression":                      {"enum": spec.Compressions},
	"KafkaSink.delivery_guarantee":               {"enum": spec.DeliveryGuarantees},
	"KafkaSink.flush_interval":                   {"pattern": `^[1-9][0-9]{0,3}(ms|s|m)$`},
}

// examples are valid request bodies, by type, for the documentation and
// for schemathesis's examples phase; the objects are all named
// "example", the example of {name}.
var examples = map[reflect.Type]any{
	reflect.TypeFor[spec.Connection](): &spec.Connection{Name: "example", BootstrapServers: []string{"127.0.0.1:9092"}},
	reflect.TypeFor[spec.Catalog]():    &spec.Catalog{Name: "example", HiveMetastore: &spec.HiveMetastore{URI: "thrift://127.0.0.1:9083"}},
	reflect.TypeFor[spec.Pipeline](): &spec.Pipeline{
		Name: "example", Connection: "example", DestinationCatalog: "main", DestinationSchema: "raw", FlushInterval: "5s",
		Tables: []spec.Table{{DestinationTable: "events", ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
			Topics:           []string{"events"},
			ValueTransformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id BIGINT, name STRING"}},
		}}}},
	},
	reflect.TypeFor[spec.FanoutSchema](): &spec.FanoutSchema{
		Name: "example", Pipeline: "example", DestinationCatalog: "main", DestinationSchema: "routed",
		ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{"routed_events"}}},
		FanoutOptions:    spec.FanoutOptions{FanoutBy: "cast(value AS STRING):type::string"},
	},
	reflect.TypeFor[spec.KafkaSink](): &spec.KafkaSink{
		Name: "example", Connection: "example", Source: &spec.KafkaOptions{Topics: []string{"events"}},
		Topic: "events_out", ValueFormat: spec.SinkFormatJSON, DeliveryGuarantee: spec.DeliveryExactlyOnce,
	},
}

// TestOpenAPI checks that openapi.json documents every route the server
// registers, with every method, and nothing else, and that it is what
// the route list and the spec types make (go test -run TestOpenAPI
// -update rewrites it).
func TestOpenAPI(t *testing.T) {
	var routes []string
	for _, rt := range (&Server{}).routeTable() {
		for method := range rt.methods {
			routes = append(routes, method+" "+rt.path)
		}
	}
	slices.Sort(routes)
	documented := slices.Sorted(maps.Keys(operations))
	if !slices.Equal(routes, documented) {
		t.Fatalf("routes and documented operations differ:\nroutes:     %v\ndocumented: %v", routes, documented)
	}

	want, err := json.MarshalIndent(buildOpenAPI((&Server{}).routeTable()), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *update {
		if err := os.WriteFile("openapi.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	var doc struct {
		OpenAPI    string                    `json:"openapi"`
		Paths      map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	var inDoc []string
	for path, ops := range doc.Paths {
		for method := range ops {
			if method != "parameters" {
				inDoc = append(inDoc, strings.ToUpper(method)+" "+path)
			}
		}
	}
	slices.Sort(inDoc)
	if !slices.Equal(routes, inDoc) {
		t.Errorf("openapi.json documents %v, the server has %v", inDoc, routes)
	}
	for key := range constraints {
		typ, attr, _ := strings.Cut(key, ".")
		if doc.Components.Schemas[typ].Properties[attr] == nil {
			t.Errorf("constraints names %s, which no spec type has", key)
		}
	}

	if !bytes.Equal(openAPI, want) {
		t.Fatal("openapi.json is out of date: run go test ./agent/internal/server -run TestOpenAPI -update")
	}
}

// buildOpenAPI returns the OpenAPI 3 document of routes.
func buildOpenAPI(routes []route) map[string]any {
	g := schemaGen{components: map[string]any{}}
	problem := g.schema(reflect.TypeFor[spec.Problem]())
	paths := map[string]any{}
	for _, rt := range routes {
		item := map[string]any{}
		if strings.Contains(rt.path, "{name}") {
			item["parameters"] = []any{map[string]any{
				"name": "name", "in": "path", "required": true, "schema": map[string]any{"type": "string"}, "example": "example",
				"description": "The object's name: 1 to 128 letters, digits, `_`, `.` or `-`, starting with a letter or digit.",
			}}
		}
		for method := range rt.methods {
			op := operations[method+" "+rt.path]
			o := map[string]any{
				"summary":     op.summary,
				"operationId": operationID(method, rt.path),
				"responses": map[string]any{
					"default": map[string]any{
						"description": "An error, as an RFC 9457 problem",
						"content":     map[string]any{"application/problem+json": map[string]any{"schema": problem}},
					},
				},
			}
			ok := map[string]any{"description": http.StatusText(op.status)}
			switch {
			case op.answer != nil:
				ok["content"] = map[string]any{"application/json": map[string]any{"schema": g.schema(op.answer)}}
			case op.text != "":
				ok["content"] = map[string]any{op.text: map[string]any{"schema": map[string]any{"type": "string"}}}
			}
			o["responses"].(map[string]any)[strconv.Itoa(op.status)] = ok
			if op.body != nil {
				o["requestBody"] = map[string]any{
					"required": true,
					"content": map[string]any{"application/json": map[string]any{
						"schema": g.schema(op.body), "example": examples[op.body],
					}},
				}
			}
			if op.body != nil {
				o["parameters"] = []any{map[string]any{
					"name": "If-None-Match", "in": "header", "required": false,
					"description": "`*` makes the PUT a create, or checks one in a dry run: 412 when the object exists.",
					"schema":      map[string]any{"type": "string", "enum": []any{"*"}},
				}}
			}
			if rt.open {
				o["security"] = []any{}
			}
			item[strings.ToLower(method)] = o
		}
		paths[rt.path] = item
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{
			"title":   "Tributary agent API",
			"version": "1",
			"description": "The API of tributary-agent, which the Terraform provider drives. " +
				"Every route but /healthz and /openapi.json needs the agent's token as a bearer token. " +
				"Request bodies are JSON sent as application/json, whose keys are exactly the attribute names, once each. " +
				"No route takes query parameters.",
		},
		"paths":    paths,
		"security": []any{map[string]any{"bearer": []any{}}},
		"components": map[string]any{
			"schemas":         g.components,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}},
		},
	}
}

// operationID names an operation: "put_v1_pipelines_name_dry_run".
func operationID(method, path string) string {
	r := strings.NewReplacer("/", "_", "{", "", "}", "", "-", "_", ".", "_")
	return strings.ToLower(method) + r.Replace(path)
}

// schemaGen makes OpenAPI schemas of Go types as encoding/json encodes
// them; a named struct becomes a component.
type schemaGen struct {
	components map[string]any
}

func (g *schemaGen) schema(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if t.Name() == "" {
			return map[string]any{"type": "object"}
		}
		name := t.Name()
		if _, done := g.components[name]; !done {
			g.components[name] = nil // a placeholder against recursion
			props := map[string]any{}
			for i := range t.NumField() {
				f := t.Field(i)
				tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if tag == "-" || !f.IsExported() {
					continue
				}
				if tag == "" {
					tag = f.Name
				}
				props[tag] = g.schema(f.Type)
				maps.Copy(props[tag].(map[string]any), constraints[name+"."+tag])
			}
			// No property is marked required: the agent fills a missing
			// name from the URL, and Validate names every other that is
			// missing (422).
			g.components[name] = map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}
		}
		return map[string]any{"type": "array", "items": g.schema(t.Elem())}
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return map[string]any{"type": "object"}
		}
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	}
	return map[string]any{}
}
