package storage

import (
	"sync"
	"time"

	"gocloud.dev/blob"
)

// bucketReuse is how long after it was opened a bucket serves new stores.
// Opening one resolves its credentials and settings (for S3, the SDK's
// whole configuration chain) and starts its connections: a few
// milliseconds and a connection per open, which an apply checking each
// table twice and then starting it paid several times over, table after
// table. After bucketReuse the next store opens it again, so that rotated
// credentials files and changed environments reach new stores. A bucket
// that refuses a store's credentials stops serving new stores at once, so
// that credentials fixed on the machine reach the next apply.
const bucketReuse = time.Minute

// buckets shares the object store buckets the stores of this process open,
// by bucket URL (the scheme, bucket and driver options, without the
// table's path).
type buckets struct {
	mu   sync.Mutex
	open map[string]*sharedBucket
	now  func() time.Time
}

// sharedBucket is a bucket and the stores using it. A bucket that stopped
// serving new stores closes with its last store; one that still serves
// them stays open while it has none, for the next.
type sharedBucket struct {
	b     *blob.Bucket
	at    time.Time
	users int
	stale bool
}

// processBuckets are the buckets of [Open]'s object stores.
var processBuckets = &buckets{open: map[string]*sharedBucket{}, now: time.Now}

// get returns the bucket of key, opening it with open when there is none
// younger than bucketReuse, the function that gives it back, which the
// store calls as it closes (more calls do nothing), and the one that stops
// it from serving new stores, which the store calls when the bucket
// refused its credentials. The open runs without
// the lock, so that a slow one (a credential chain that probes, say) holds
// up no other store; of two racing opens of a key, the second is closed
// and its caller shares the first.
func (bs *buckets) get(key string, open func() (*blob.Bucket, error)) (b *blob.Bucket, release func() error, refused func(), err error) {
	bs.mu.Lock()
	sb := bs.fresh(key)
	if sb == nil {
		bs.mu.Unlock()
		b, err := open()
		if err != nil {
			return nil, nil, nil, err
		}
		bs.mu.Lock()
		if sb = bs.fresh(key); sb != nil {
			_ = b.Close() // another store opened it meanwhile
		} else {
			sb = &sharedBucket{b: b, at: bs.now()}
			bs.open[key] = sb
		}
	}
	sb.users++
	bs.mu.Unlock()
	var once sync.Once
	var perr error
	release = func() error {
		once.Do(func() { perr = bs.put(sb) })
		return perr
	}
	refused = func() {
		bs.mu.Lock()
		defer bs.mu.Unlock()
		if bs.open[key] == sb {
			bs.retire(key, sb)
		}
	}
	return sb.b, release, refused, nil
}

// fresh returns the bucket of key younger than bucketReuse, nil if there
// is none, and retires the older ones nothing uses: theirs and any other
// key's, so that a bucket no store asks for again does not stay open. The
// caller holds bs.mu.
func (bs *buckets) fresh(key string) *sharedBucket {
	for k, sb := range bs.open {
		if bs.now().Sub(sb.at) < bucketReuse {
			continue
		}
		if k == key || sb.users == 0 {
			bs.retire(k, sb)
		}
	}
	return bs.open[key]
}

// retire stops sb, the bucket of key, from serving new stores; it closes
// now if nothing uses it, else with its last store. The caller holds
// bs.mu.
func (bs *buckets) retire(key string, sb *sharedBucket) {
	sb.stale = true
	delete(bs.open, key)
	if sb.users == 0 {
		_ = sb.b.Close() // nothing uses it, and nothing will
	}
}

// put gives sb back from one of its stores.
func (bs *buckets) put(sb *sharedBucket) error {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	sb.users--
	if sb.stale && sb.users == 0 {
		return sb.b.Close()
	}
	return nil
}
