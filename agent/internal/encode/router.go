package encode

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TopicColumn is the column whose value, in a row's image, names the topic
// the row is written to, before any sink setting (S-12).
const TopicColumn = "topic"

// Router picks the topic of each row of a sink. It is safe for concurrent
// use.
type Router struct {
	topic       string
	mapping     []topicRule
	fullTableID bool
}

// topicRule sends the tables whose full id one of ids matches to topic.
type topicRule struct {
	ids   []*regexp.Regexp
	topic string
}

// NewRouter returns the router of s: its topic, else its
// table_topic_mapping, else each row's table id. The error names what in
// table_topic_mapping does not parse.
func NewRouter(s *spec.KafkaSink) (*Router, error) {
	r := &Router{topic: s.Topic, fullTableID: on(s.FullTableID, false)}
	var err error
	if r.mapping, err = parseMapping(s.TableTopicMapping); err != nil {
		return nil, fmt.Errorf("table_topic_mapping: %w", err)
	}
	return r, nil
}

// parseMapping parses "db.t1:topic1;db.t2,db.t3:topic2": rules separated
// by semicolons, each one or more table ids (regular expressions that
// must match the whole id) separated by commas, a colon and a topic.
func parseMapping(s string) ([]topicRule, error) {
	var rules []topicRule
	for rule := range strings.SplitSeq(s, ";") {
		rule = strings.TrimSpace(rule)
		if rule == "" {
			continue
		}
		ids, topic, ok := cut(rule)
		if !ok {
			return nil, fmt.Errorf("%q is not <table id>:<topic>", rule)
		}
		tr := topicRule{topic: topic}
		for id := range strings.SplitSeq(ids, ",") {
			id = strings.TrimSpace(id)
			re, err := regexp.Compile(`^(?:` + id + `)$`)
			if id == "" || err != nil {
				return nil, fmt.Errorf("table id %q of %q is not a regular expression: %v", id, rule, err)
			}
			tr.ids = append(tr.ids, re)
		}
		rules = append(rules, tr)
	}
	return rules, nil
}

// cut splits a rule at its last colon (topic names have none) into table
// ids and topic, both non-empty.
func cut(rule string) (ids, topic string, ok bool) {
	i := strings.LastIndexByte(rule, ':')
	if i < 0 {
		return "", "", false
	}
	ids, topic = strings.TrimSpace(rule[:i]), strings.TrimSpace(rule[i+1:])
	return ids, topic, ids != "" && topic != ""
}

// Topic returns the topic of row: its image's topic column when it has a
// STRING one that is not null or empty, else the sink's topic, else the
// topic of the first table_topic_mapping rule that matches the row's full
// table id ([TableID]), else its table id: "<db>.<table>" with
// full_table_id, the table alone without, the source topic for a row
// without a source table.
func (r *Router) Topic(row *Row) string {
	for i, f := range row.Fields {
		if f.Name == TopicColumn && f.Type.Kind == schema.String {
			if s, ok := row.Values[i].(string); ok && s != "" {
				return s
			}
		}
	}
	if r.topic != "" {
		return r.topic
	}
	id := TableID(row)
	for _, rule := range r.mapping {
		for _, re := range rule.ids {
			if re.MatchString(id) {
				return rule.topic
			}
		}
	}
	o := options{fullTableID: r.fullTableID}
	return o.table(row)
}
