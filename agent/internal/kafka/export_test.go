package kafka

// SetSequence sets the sequence number p gives the next batch it writes to
// tp: tests use it to send a batch again as if its answer had been lost
// (an earlier number), or to skip numbers (a later one).
func (p *Producer) SetSequence(tp TopicPartition, seq int32) { p.seq[tp] = seq }

// ProducerID returns the producer id InitProducerId gave p, -1 for none.
func (p *Producer) ProducerID() int64 { return p.id }
