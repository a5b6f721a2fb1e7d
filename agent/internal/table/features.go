package table

import (
	"fmt"
	"slices"
	"strings"
)

// supportedFeatures are the table features this package implements, as a
// reader and as a writer: the ones its own tables use. Adding one here is a
// promise that every commit respects it (see the Delta protocol's section
// on the feature); a feature that is only listed but not active (say
// changeDataFeed without delta.enableChangeDataFeed) is still refused, so
// the check never depends on the table's configuration.
var supportedFeatures = []string{featureAppendOnly, featureInvariants, featureTimestampNTZ, featureVariantType}

// legacyWriterFeatures describes what writer versions 3 to 6 ask of a
// writer, each on top of the previous one (the protocol's "Writer Version
// Requirements"). This package implements none of it.
var legacyWriterFeatures = map[int32]string{
	3: "CHECK constraints",
	4: "change data feed and generated columns",
	5: "column mapping",
	6: "identity columns",
}

// checkProtocol returns an [*ErrUnsupportedFeature] naming file when p asks
// for a protocol version or a table feature this package does not
// implement. Reader version 1 and writer versions 1 and 2 need nothing
// beyond the basics (writer version 2 means append-only tables and column
// invariants, both supported); reader version 3 and writer version 7 list
// their features.
func checkProtocol(p *protocolAction, file string) error {
	unsupported := func(feature string) error {
		return &ErrUnsupportedFeature{Feature: feature, File: file}
	}
	switch r := p.MinReaderVersion; {
	case r == 2:
		return unsupported("reader version 2 (column mapping)")
	case r > 3:
		return unsupported(fmt.Sprintf("reader version %d", r))
	}
	switch w := p.MinWriterVersion; {
	case w > 7:
		return unsupported(fmt.Sprintf("writer version %d", w))
	case w >= 3 && w <= 6:
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
