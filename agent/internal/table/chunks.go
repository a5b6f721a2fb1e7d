package table

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Limits on what a checkpoint's footer and page headers may claim. parquet-go
// allocates what a page header says a page holds before decoding it, so a
// damaged checkpoint could otherwise make the agent allocate until the
// process dies, for every table it runs, at every start.
const (
	// maxChunkBytes bounds the uncompressed size of one column chunk: a
	// checkpoint that large describes millions of files, more than the
	// agent's memory holds anyway.
	maxChunkBytes = 1 << 30
	// maxChunkRatio bounds how much larger a column chunk is uncompressed
	// than compressed, far above what a codec achieves on a checkpoint.
	maxChunkRatio = 1000
	// maxChunkValues bounds the number of values of one column chunk.
	maxChunkValues = 1 << 28
)

// checkFooterSize checks that the footer length a Parquet file of size
// bytes in r ends with fits in the file: parquet-go allocates it before
// looking.
func checkFooterSize(r io.ReaderAt, size int64) error {
	var tail [8]byte
	if size < int64(len(tail))+4 {
		return fmt.Errorf("%d bytes are too few for a Parquet file", size)
	}
	if _, err := r.ReadAt(tail[:], size-int64(len(tail))); err != nil {
		return err
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > size-int64(len(tail))-4 {
		return fmt.Errorf("the footer claims %d bytes, more than the file of %d bytes holds", n, size)
	}
	return nil
}

// checkChunks checks, before parquet-go reads the checkpoint of size bytes
// in r, that every column chunk of footer md lies within the file, uses a
// codec parquet-go decodes safely (not LZ4: its decoder grows its buffer
// forever on bad input; no engine writes checkpoints with it by default),
// and that its page headers
// agree with the chunk: pages that fill the chunk exactly, none bigger or
// holding more values than the whole chunk.
func checkChunks(r io.ReaderAt, size int64, md *format.FileMetaData) error {
	for i := range md.RowGroups {
		for j := range md.RowGroups[i].Columns {
			m := &md.RowGroups[i].Columns[j].MetaData
			if err := checkChunk(r, size, m); err != nil {
				return fmt.Errorf("row group %d, column %d: %w", i, j, err)
			}
		}
	}
	return nil
}

func checkChunk(r io.ReaderAt, size int64, m *format.ColumnMetaData) error {
	switch m.Codec {
	case format.Uncompressed, format.Snappy, format.Gzip, format.Zstd, format.Brotli:
	default:
		return fmt.Errorf("compression codec %s is not supported in checkpoints", m.Codec)
	}
	start := m.DataPageOffset
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
		start = m.DictionaryPageOffset
	}
	switch {
	case start < 0 || m.TotalCompressedSize <= 0 || m.TotalCompressedSize > size-start:
		return fmt.Errorf("the chunk (offset %d, %d bytes) is not within the file of %d bytes", start, m.TotalCompressedSize, size)
	case m.TotalUncompressedSize < 0 || m.TotalUncompressedSize > min(maxChunkBytes, maxChunkRatio*m.TotalCompressedSize):
		return fmt.Errorf("the chunk claims %d bytes uncompressed", m.TotalUncompressedSize)
	case m.NumValues < 0 || m.NumValues > maxChunkValues:
		return fmt.Errorf("the chunk claims %d values", m.NumValues)
	}
	chunk := make([]byte, m.TotalCompressedSize)
	if _, err := r.ReadAt(chunk, start); err != nil {
		return err
	}
	var protocol thrift.CompactProtocol
	for rest := bytes.NewReader(chunk); rest.Len() > 0; {
		var h format.PageHeader
		if err := thrift.NewDecoder(protocol.NewReader(rest)).Decode(&h); err != nil {
			return fmt.Errorf("page header: %w", err)
		}
		values := int64(0)
		switch {
		case h.DataPageHeader.Valid:
			values = int64(h.DataPageHeader.V.NumValues)
		case h.DataPageHeaderV2.Valid:
			values = int64(h.DataPageHeaderV2.V.NumValues)
		case h.DictionaryPageHeader.Valid:
			values = int64(h.DictionaryPageHeader.V.NumValues)
		}
		switch {
		case h.CompressedPageSize < 0 || int64(h.CompressedPageSize) > int64(rest.Len()):
			return fmt.Errorf("a page of %d bytes overruns the chunk", h.CompressedPageSize)
		case h.UncompressedPageSize < 0 || int64(h.UncompressedPageSize) > m.TotalUncompressedSize:
			return fmt.Errorf("a page claims %d bytes uncompressed, more than its chunk's %d", h.UncompressedPageSize, m.TotalUncompressedSize)
		case values < 0 || values > m.NumValues:
			return fmt.Errorf("a page claims %d values, more than its chunk's %d", values, m.NumValues)
		}
		if _, err := rest.Seek(int64(h.CompressedPageSize), io.SeekCurrent); err != nil {
			return err
		}
	}
	return nil
}
