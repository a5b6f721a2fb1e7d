package kafka

import (
	"cmp"
	"slices"
)

// abortedTxn is one entry of a fetch response's aborted transactions: the
// producer whose transaction aborted and the first offset it wrote in it.
type abortedTxn struct {
	ProducerID  int64
	FirstOffset int64
}

// abortFilter decides, batch by batch in offset order, which batches of one
// fetched partition belong to aborted transactions. It is the algorithm of
// Kafka's own consumer (CompletedFetch): the broker lists the aborted
// transactions that overlap the fetched range; a producer's transaction
// counts as aborted from its first offset until the producer's abort marker.
// It is used only under read_committed and lives for one fetch response.
type abortFilter struct {
	// upcoming are the aborted transactions not yet reached, by first offset.
	upcoming []abortedTxn
	// aborting holds the producers inside an aborted transaction.
	aborting map[int64]struct{}
}

func newAbortFilter(txns []abortedTxn) *abortFilter {
	upcoming := slices.Clone(txns)
	slices.SortFunc(upcoming, func(a, b abortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	return &abortFilter{upcoming: upcoming, aborting: map[int64]struct{}{}}
}

// skipData reports whether the records of data batch b belong to an aborted
// transaction. Control batches go to [abortFilter.sawControl] instead.
func (f *abortFilter) skipData(b *recordBatch) bool {
	if !b.transactional() {
		return false
	}
	f.reach(b.lastOffset())
	_, aborted := f.aborting[b.producerID]
	return aborted
}

// sawControl accounts for control batch b: an abort marker ends its
// producer's aborted transaction.
func (f *abortFilter) sawControl(b *recordBatch, markerType int16) {
	f.reach(b.lastOffset())
	if markerType == controlAbort {
		delete(f.aborting, b.producerID)
	}
}

// reach marks every aborted transaction that starts at or before offset as
// in progress.
func (f *abortFilter) reach(offset int64) {
	for len(f.upcoming) > 0 && f.upcoming[0].FirstOffset <= offset {
		f.aborting[f.upcoming[0].ProducerID] = struct{}{}
		f.upcoming = f.upcoming[1:]
	}
}
