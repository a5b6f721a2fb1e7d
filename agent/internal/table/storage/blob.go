package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob:// (and abfss:// below)
	_ "gocloud.dev/blob/gcsblob"   // gs://
	_ "gocloud.dev/blob/s3blob"    // s3://
	"gocloud.dev/gcerrors"
)

// blobTimeout bounds each request to an object store but the streaming of a
// data file: a store that stops answering fails the operation (and the
// table retries) rather than hanging the table.
const blobTimeout = 2 * time.Minute

// blobPartSize is the part size of the multipart uploads that write data
// files, S3's smallest. An upload holds up to three parts in memory (see
// [blobWriter.Held]).
const blobPartSize = 5 << 20

// blobStore keeps a table under a prefix of an object store bucket (S3, GCS
// or Azure Blob Storage), through gocloud.dev/blob and each cloud's
// standard credential chain. Data files are streamed as multipart uploads,
// visible only once complete; log entries and checkpoints are created with
// a conditional write (S3 If-None-Match: *, GCS ifGenerationMatch=0, Azure
// If-None-Match: *), so of two writers of one log version only one wins, as
// delta-rs and Spark commit to these stores. There is no lock.
type blobStore struct {
	// b is the bucket, which the stores of the process share (see
	// [buckets]); the table's objects are those under prefix.
	b        *blob.Bucket
	prefix   string
	location string     // the table's URL, without query parameters
	s3       *s3.Client // the bucket's client, when it is an S3 bucket
	release  func() error
	// refused stops the shared bucket from serving new stores, after it
	// refused the credentials it was opened with (see [buckets]).
	refused func()
}

// openBlobStore opens the table at u, an object store URL whose path is the
// table's prefix in the bucket: s3://bucket/prefix, gs://bucket/prefix,
// azblob://container/prefix or abfss://container@account.dfs.core.windows.net/prefix.
// The query parameters go to the store's driver (for S3, e.g. region,
// endpoint and use_path_style).
func openBlobStore(u *url.URL) (*blobStore, error) {
	bucketURL := *u
	bucketURL.Path = ""
	if u.Scheme == "abfss" {
		// ADLS Gen2 names a container and an account; the blob API of the
		// same account reaches the same data.
		account, _, _ := strings.Cut(u.Host, ".")
		container := u.User.Username()
		if container == "" || account == "" {
			return nil, fmt.Errorf("%s: an abfss URL is abfss://<container>@<account>.dfs.core.windows.net/<path>", redact(u))
		}
		q := u.Query()
		q.Set("storage_account", account)
		bucketURL = url.URL{Scheme: "azblob", Host: container, RawQuery: q.Encode()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	b, release, refused, err := processBuckets.get(bucketURL.String(), func() (*blob.Bucket, error) {
		return blob.OpenBucket(ctx, bucketURL.String())
	})
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", redact(u), err)
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		prefix += "/"
	}
	return newBlobStore(b, prefix, redact(u), release, refused), nil
}

// newBlobStore returns the store of the objects under prefix (empty, or
// ending in a slash) in bucket b, named location in messages; its Close
// calls release, and an error refusing its credentials calls refused.
func newBlobStore(b *blob.Bucket, prefix, location string, release func() error, refused func()) *blobStore {
	s := &blobStore{b: b, prefix: prefix, location: location, release: release, refused: refused}
	b.As(&s.s3) // leaves it nil for a bucket of another store
	return s
}

// key is the bucket's key of the store's object name.
func (s *blobStore) key(name string) string { return s.prefix + name }

// FromBucket returns the store of bucket b, whose keys are the store's
// names (a prefix goes in b: see blob.PrefixedBucket), with location its
// name in messages: for a bucket the caller opens itself, such as the
// in-memory bucket of gocloud.dev/blob/memblob in tests. The store's Close
// closes b.
func FromBucket(b *blob.Bucket, location string) Store {
	return newBlobStore(b, "", location, b.Close, func() {})
}

// redact is u without its query parameters (which may hold credentials) or
// user information but an abfss container.
func redact(u *url.URL) string {
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	if u.Scheme == "abfss" && u.User != nil {
		r.User = url.User(u.User.Username())
	}
	return r.String()
}

func (s *blobStore) String() string { return s.location }

// Close gives the bucket back: the last store of a bucket that stopped
// serving new ones closes it.
func (s *blobStore) Close() error { return s.release() }

// blobErr maps the driver's errors to the fs errors the table checks for.
// An error that says the store refused the credentials (or the identity
// they name) also stops the bucket serving new stores: the next apply,
// after the credentials were fixed, opens it with the new ones.
func (s *blobStore) blobErr(name string, err error) error {
	if err != nil && refusedCredentials(err) {
		s.refused()
	}
	switch gcerrors.Code(err) {
	case gcerrors.OK:
		return nil
	case gcerrors.NotFound:
		return fmt.Errorf("%s: %w: %w", name, fs.ErrNotExist, err)
	case gcerrors.FailedPrecondition:
		return fmt.Errorf("%s: %w: %w", name, fs.ErrExist, err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// errAborted ends the upload of an aborted blobWriter.
var errAborted = errors.New("upload aborted")

// Create streams the object through a pipe into one Bucket.Upload call
// rather than through a blob.Writer's Write: gocloud.dev's Azure driver
// panics (it closes a pipe it has already dropped) when an upload written
// with Write fails, as a lost conditional create does; Upload hands the
// driver the reader itself.
func (s *blobStore) Create(name string) (Writer, error) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	w := &blobWriter{s: s, name: name, pw: pw, cancel: cancel, result: make(chan error, 1)}
	go func() {
		err := s.b.Upload(ctx, s.key(name), pr, &blob.WriterOptions{IfNotExist: true, BufferSize: blobPartSize, MaxConcurrency: 1,
			ContentType: "application/octet-stream", BeforeWrite: s.sizeUpload})
		// Writes after a failed upload fail with its error rather than
		// block; after a complete one, with io.ErrClosedPipe.
		pr.CloseWithError(err)
		w.result <- err
	}()
	return w, nil
}

// sizeUpload makes an S3 upload start its multipart upload once it has read
// blobPartSize bytes into the growing buffer of its first part, where the
// transfer manager would read up to its multipart threshold (16 MiB) first. The
// driver hands out the transfer manager it made for the upload only as a
// pointer, so its settings are replaced in place: the driver's own (part
// size, concurrency and the bucket's checksum setting, which is its
// client's) plus the threshold.
func (s *blobStore) sizeUpload(as func(any) bool) error {
	var tm *transfermanager.Client
	if s.s3 == nil || !as(&tm) {
		return nil
	}
	*tm = *transfermanager.New(s.s3, func(o *transfermanager.Options) {
		o.PartSizeBytes, o.MultipartUploadThreshold, o.Concurrency = blobPartSize, blobPartSize, 1
		o.RequestChecksumCalculation = s.s3.Options().RequestChecksumCalculation
	})
	return nil
}

// blobWriter is an upload in progress: its bytes go through pw to the
// Upload call of [blobStore.Create], whose outcome comes on result.
type blobWriter struct {
	s      *blobStore
	name   string
	pw     *io.PipeWriter
	cancel context.CancelFunc
	result chan error
	done   bool
	// written counts the bytes the upload took: a write returns once the
	// upload has read its bytes from the pipe.
	written int64
}

func (w *blobWriter) Write(p []byte) (int, error) {
	n, err := w.pw.Write(p)
	w.written += int64(n)
	if err != nil {
		err = w.s.blobErr(w.name, err)
	}
	return n, err
}

// Held is what the upload holds in memory: up to the first part, read
// whole, and then, at most, three parts on S3 (that part in flight and the
// two buffers of the transfer manager's part pool, which it allocates when
// the multipart upload starts) and two elsewhere (GCS's chunk buffer,
// Azure's block buffers with one block in flight).
func (w *blobWriter) Held() int64 {
	if w.done {
		return 0
	}
	if w.written < blobPartSize {
		return w.written
	}
	if w.s.s3 != nil {
		return 3 * blobPartSize
	}
	return 2 * blobPartSize
}

func (w *blobWriter) Commit() (Entry, error) {
	if w.done {
		return Entry{}, fmt.Errorf("%s is already written", w.name)
	}
	w.done = true
	defer w.cancel()
	_ = w.pw.Close() // the end of the object
	if err := <-w.result; err != nil {
		return Entry{}, w.s.blobErr(w.name, err)
	}
	return w.s.Stat(w.name)
}

func (w *blobWriter) Abort() {
	if !w.done {
		w.done = true
		w.cancel() // a canceled context aborts the upload
		w.pw.CloseWithError(errAborted)
		<-w.result //nolint:errcheck // the upload was aborted: its error says only that
	}
}

// PutIfAbsent and Put hand Upload the bytes (see [blobStore.Create]).
func (s *blobStore) PutIfAbsent(name string, data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	return s.blobErr(name, s.b.Upload(ctx, s.key(name), bytes.NewReader(data), &blob.WriterOptions{IfNotExist: true, ContentType: "application/json"}))
}

func (s *blobStore) Put(name string, data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	return s.blobErr(name, s.b.Upload(ctx, s.key(name), bytes.NewReader(data), &blob.WriterOptions{ContentType: "application/json"}))
}

func (s *blobStore) Read(name string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	data, err := s.b.ReadAll(ctx, s.key(name))
	return data, s.blobErr(name, err)
}

func (s *blobStore) Open(name string) (File, error) {
	e, err := s.Stat(name)
	if err != nil {
		return nil, err
	}
	return blobFile{s: s, name: name, n: e.Size}, nil
}

// blobFile reads an object with a ranged request per ReadAt.
type blobFile struct {
	s    *blobStore
	name string
	n    int64
}

func (f blobFile) Size() int64  { return f.n }
func (f blobFile) Close() error { return nil }

func (f blobFile) ReadAt(p []byte, off int64) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	r, err := f.s.b.NewRangeReader(ctx, f.s.key(f.name), off, int64(len(p)), nil)
	if err != nil {
		return 0, f.s.blobErr(f.name, err)
	}
	defer r.Close()
	n, err := io.ReadFull(r, p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	return n, err
}

func (s *blobStore) List(dir string) ([]Entry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	var entries []Entry
	it := s.b.List(&blob.ListOptions{Prefix: s.key(prefix), Delimiter: "/"})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return entries, nil
		}
		if err != nil {
			return nil, s.blobErr(prefix, err)
		}
		entries = append(entries, Entry{Name: strings.TrimSuffix(strings.TrimPrefix(o.Key, s.key(prefix)), "/"), Size: o.Size,
			ModTime: o.ModTime, Dir: o.IsDir})
	}
}

func (s *blobStore) Stat(name string) (Entry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	a, err := s.b.Attributes(ctx, s.key(name))
	if err != nil {
		return Entry{}, s.blobErr(name, err)
	}
	return Entry{Name: name[strings.LastIndex(name, "/")+1:], Size: a.Size, ModTime: a.ModTime}, nil
}

func (s *blobStore) Remove(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	err := s.blobErr(name, s.b.Delete(ctx, s.key(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Lock has nothing to take: see [blobStore].
func (s *blobStore) Lock(string) (func() error, error) { return nil, nil }

// refusedCredentials reports whether err says the store refused the
// request's credentials or the identity they name: HTTP 401 or 403, which
// gocloud.dev does not always map to a code (an S3 key the server does
// not know, or a signature that does not match, is Unknown to it).
func refusedCredentials(err error) bool {
	switch gcerrors.Code(err) {
	case gcerrors.PermissionDenied:
		return true
	}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		c := status.HTTPStatusCode()
		return c == http.StatusUnauthorized || c == http.StatusForbidden
	}
	return false
}
