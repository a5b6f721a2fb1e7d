package table

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// supportedFeatures are the table features this package implements, as a
// reader and as a writer: the ones its own tables use. Adding one here is a
// promise that every commit respects it (see the Delta protocol's section
// on the feature); a feature that is only listed but not active (say
// changeDataFeed without delta.enableChangeDataFeed) is still refused, so
// the check never depends on the table's configuration.
var supportedFeatures = []string{featureAppendOnly, featureInvariants, featureTimestampNTZ, featureVariantType, featureColumnMapping, featureTypeWidening,
	featureGeneratedColumns}

// legacyWriterFeatures describes what writer versions 3 to 6 ask of a
// writer, each on top of the previous one (the protocol's "Writer Version
// Requirements"). This package implements column mapping; it accepts
// writer version 5 when the table uses none of the others (see
// checkLegacyFeatures), and refuses versions 3, 4 and 6.
var legacyWriterFeatures = map[int32]string{
	3: "CHECK constraints",
	4: "change data feed and generated columns",
	5: "column mapping",
	6: "identity columns",
}

// checkProtocol returns an [*UnsupportedFeatureError] naming file when p asks
// for a protocol version or a table feature this package does not
// implement. Reader version 1 and writer versions 1 and 2 need nothing
// beyond the basics (writer version 2 means append-only tables and column
// invariants, both supported); reader version 2 and writer version 5 mean
// column mapping; reader version 3 and writer version 7 list their
// features.
func checkProtocol(p *protocolAction, file string) error {
	unsupported := func(feature string) error {
		return &UnsupportedFeatureError{Feature: feature, File: file}
	}
	if r := p.MinReaderVersion; r > 3 {
		return unsupported(fmt.Sprintf("reader version %d", r))
	}
	switch w := p.MinWriterVersion; {
	case w > 7:
		return unsupported(fmt.Sprintf("writer version %d", w))
	case w >= 3 && w <= 6 && w != 5:
		var needs []string
		for v := int32(3); v <= w; v++ {
			needs = append(needs, legacyWriterFeatures[v])
		}
		return unsupported(fmt.Sprintf("writer version %d (%s)", w, strings.Join(needs, ", ")))
	}
	for _, f := range slices.Concat(p.ReaderFeatures, p.WriterFeatures) {
		if !slices.Contains(supportedFeatures, f) {
			return unsupported("table feature " + f)
		}
	}
	return nil
}

// Table properties and field metadata that turn on what writer versions 3
// and 4 ask for.
const (
	propConstraintPrefix = "delta.constraints."
	propChangeDataFeed   = "delta.enableChangeDataFeed"
	metaGeneration       = "delta.generationExpression"
)

// checkLegacyFeatures returns an [*UnsupportedFeatureError] when a table on
// writer version 5 (which implies versions 3 and 4) uses what those ask
// for and this package does not implement: CHECK constraints, the change
// data feed or generated columns. extra is the schema's field metadata.
func checkLegacyFeatures(p *protocolAction, config map[string]string, extra schema.Metadata) error {
	if p == nil || p.MinWriterVersion != 5 {
		return nil
	}
	for k := range config {
		if strings.HasPrefix(k, propConstraintPrefix) {
			return &UnsupportedFeatureError{Feature: "writer version 5 with CHECK constraints (" + k + ")"}
		}
	}
	if strings.EqualFold(config[propChangeDataFeed], "true") {
		return &UnsupportedFeatureError{Feature: "writer version 5 with the change data feed (" + propChangeDataFeed + ")"}
	}
	for path, kv := range extra {
		if _, ok := kv[metaGeneration]; ok {
			return &UnsupportedFeatureError{Feature: "writer version 5 with generated column " + path}
		}
	}
	return nil
}
