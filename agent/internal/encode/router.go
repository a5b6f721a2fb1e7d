package encode

import (
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TopicColumn is the column whose value, in a row's image, names the topic
// the row is written to, unless the sink's topic is set.
const TopicColumn = "topic"

// Router picks the topic of each row of a sink. It is safe for concurrent
// use.
type Router struct {
	topic       string
	mapping     []spec.TopicRoute
	fullTableID bool
	// column keeps the index of the last Fields slice's topic column, -1
	// for none.
	column fieldsMemo[int]
}

// NewRouter returns the router of s: its topic, else its
// table_topic_mapping ([spec.ParseTopicMapping]), else each row's table
// id. The error says what in table_topic_mapping does not parse.
func NewRouter(s *spec.KafkaSink) (*Router, error) {
	r := &Router{topic: s.Topic, fullTableID: on(s.FullTableID, false)}
	if s.TableTopicMapping != "" {
		var err error
		if r.mapping, err = spec.ParseTopicMapping(s.TableTopicMapping); err != nil {
			return nil, fmt.Errorf("table_topic_mapping: %w", err)
		}
	}
	return r, nil
}

// Topic returns the topic of row: the sink's topic, which overrides
// everything as Spark's topic option overrides a topic column, else its
// image's topic column when it has a STRING one that is not null or empty,
// else the topic of the first table_topic_mapping entry with a pattern
// that matches the row's full table id ([TableID]), else its table id:
// "<db>.<table>" with full_table_id, the table alone without, the source
// topic for a row without a source table.
func (r *Router) Topic(row *Row) string {
	if r.topic != "" {
		return r.topic
	}
	if i := r.column.get(row.Fields, "", func() int { return topicColumn(row.Fields) }); i >= 0 {
		if s, ok := row.Values[i].(string); ok && s != "" {
			return s
		}
	}
	id := TableID(row)
	for i := range r.mapping {
		if r.mapping[i].Match(id) {
			return r.mapping[i].Topic
		}
	}
	o := options{fullTableID: r.fullTableID}
	return o.table(row)
}

// topicColumn returns the index in fields of the first STRING column
// named [TopicColumn], -1 for none.
func topicColumn(fields []schema.Field) int {
	for i, f := range fields {
		if f.Name == TopicColumn && f.Type.Kind == schema.String {
			return i
		}
	}
	return -1
}
