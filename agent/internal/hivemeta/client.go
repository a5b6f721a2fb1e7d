// Package hivemeta registers Delta tables by name in a Hive Metastore, over
// its Thrift API, as Spark registers an external Delta table (CREATE TABLE
// ... USING DELTA LOCATION ...): spark.table("schema.table") then reads the
// table with catalogImplementation=hive, and engines that read Delta
// tables through a metastore (Trino's Delta connector, say) find it by
// name. The registration names the table's folder; its schema stays in
// the Delta log, where every reader takes it from, so it follows the
// table's evolution without a change in the metastore.
//
// It sits beside the table's log, like package mirror: a registration is
// made once a table has its first commit, and a metastore that is down
// only delays it.
package hivemeta

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"sync"
	"time"
)

// ErrTaken is wrapped by the error of [Client.Register] when the name is
// taken by a table of another location or another kind.
var ErrTaken = errors.New("name taken")

// defaultTimeout bounds a call when the context has no deadline.
const defaultTimeout = 30 * time.Second

// Client talks to one metastore over one connection. It is safe for
// concurrent use: calls take turns.
type Client struct {
	addr string
	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
	seq  int32
}

// New returns a client of the metastore at uri (thrift://host:port). It
// connects at the first call.
func New(uri string) (*Client, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "thrift" || u.Host == "" || u.Port() == "" {
		return nil, fmt.Errorf("hive metastore uri %q is not thrift://host:port", uri)
	}
	return &Client{addr: u.Host}, nil
}

// Close closes the connection.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn = nil
	return err
}

// Table is a registration, as the metastore holds it.
type Table struct {
	// Location is the table's folder (the serde path Spark reads).
	Location string
	// Provider is the data source provider (delta for a Delta table;
	// empty for a Hive table).
	Provider string
}

// Register makes name db.table the Delta table at location (a URI: file:/
// for a local folder), creating database db when the metastore lacks it.
// A registration of the same location is left as it is; a name taken by
// another table is an error wrapping [ErrTaken].
func (c *Client) Register(ctx context.Context, db, table, location string) error {
	got, err := c.GetTable(ctx, db, table)
	if err != nil {
		return err
	}
	if got != nil {
		if got.Provider == "delta" && got.Location == location {
			return nil
		}
		return fmt.Errorf("%w: %s.%s in the hive metastore is the %s table at %q, not the Delta table at %q",
			ErrTaken, db, table, providerName(got.Provider), got.Location, location)
	}
	if err := c.createDatabase(ctx, db); err != nil {
		return err
	}
	err = c.call(ctx, "create_table", func(e *enc) {
		e.field(tStruct, 1)
		writeTable(e, db, table, location)
	}, func(d *dec, id int16) (string, error) {
		if id == 0 {
			return "", nil
		}
		msg, err := d.exception()
		if id == 1 {
			return "", fmt.Errorf("%w: %s.%s exists in the hive metastore: %s", ErrTaken, db, table, msg)
		}
		return msg, err
	})
	if err != nil {
		return fmt.Errorf("registering %s.%s in the hive metastore: %w", db, table, err)
	}
	return nil
}

// GetTable returns the registration of db.table, nil when there is none.
func (c *Client) GetTable(ctx context.Context, db, table string) (*Table, error) {
	var got *Table
	notFound := false
	err := c.call(ctx, "get_table", func(e *enc) {
		e.strField(1, db)
		e.strField(2, table)
	}, func(d *dec, id int16) (string, error) {
		switch id {
		case 0:
			t, err := readTable(d)
			got = t
			return "", err
		case 2: // NoSuchObjectException
			notFound = true
			_, err := d.exception()
			return "", err
		}
		return d.exception()
	})
	if notFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s.%s from the hive metastore: %w", db, table, err)
	}
	return got, nil
}

// Drop removes the registration of db.table, keeping the table's files;
// one that does not exist is not an error.
func (c *Client) Drop(ctx context.Context, db, table string) error {
	err := c.call(ctx, "drop_table", func(e *enc) {
		e.strField(1, db)
		e.strField(2, table)
		e.boolField(3, false) // deleteData
	}, func(d *dec, id int16) (string, error) {
		msg, err := d.exception()
		if id == 1 { // NoSuchObjectException
			return "", err
		}
		return msg, err
	})
	if err != nil {
		return fmt.Errorf("dropping %s.%s from the hive metastore: %w", db, table, err)
	}
	return nil
}

// createDatabase creates database db unless it exists.
func (c *Client) createDatabase(ctx context.Context, db string) error {
	err := c.call(ctx, "create_database", func(e *enc) {
		e.field(tStruct, 1)
		e.strField(1, db)
		e.strField(2, "created by tributary")
		e.stop()
	}, func(d *dec, id int16) (string, error) {
		msg, err := d.exception()
		if id == 1 { // AlreadyExistsException
			return "", err
		}
		return msg, err
	})
	if err != nil {
		return fmt.Errorf("creating database %s in the hive metastore: %w", db, err)
	}
	return nil
}

// writeTable writes the Table struct of an external Delta table, in the
// shape Spark writes: its columns a placeholder (the schema is in the
// Delta log), the folder in the serde's path parameter, which Spark reads,
// and as the location, which other engines read.
func writeTable(e *enc, db, table, location string) {
	params := map[string]string{"EXTERNAL": "TRUE", "spark.sql.sources.provider": "delta",
		"spark.sql.sources.schema": `{"type":"struct","fields":[]}`, "tributary.registered": "true"}
	e.strField(1, table)
	e.strField(2, db)
	e.strField(3, "tributary")
	e.i32Field(4, int32(time.Now().Unix()))
	e.i32Field(5, 0)
	e.i32Field(6, 0)
	e.field(tStruct, 7) // sd
	{
		e.field(tList, 1) // cols
		e.byte1(tStruct)
		e.i32(1)
		e.strField(1, "col")
		e.strField(2, "array<string>")
		e.strField(3, "from deserializer")
		e.stop()
		e.strField(2, location)
		e.strField(3, "org.apache.hadoop.mapred.SequenceFileInputFormat")
		e.strField(4, "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat")
		e.boolField(5, false)
		e.i32Field(6, -1)
		e.field(tStruct, 7) // serdeInfo
		e.strField(2, "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe")
		serde := map[string]string{"serialization.format": "1", "path": location}
		e.strMapField(3, serde, slices.Sorted(maps.Keys(serde)))
		e.stop()
		e.stop()
	}
	e.field(tList, 8) // partitionKeys: none, as Spark registers a Delta table
	e.byte1(tStruct)
	e.i32(0)
	e.strMapField(9, params, slices.Sorted(maps.Keys(params)))
	e.strField(12, "EXTERNAL_TABLE")
	e.stop()
}

// readTable reads the parts of a Table struct a registration compares.
func readTable(d *dec) (*Table, error) {
	t := &Table{}
	var sdLocation string
	err := d.fields(func(ft byte, id int16) (bool, error) {
		switch {
		case id == 7 && ft == tStruct: // sd
			return true, d.fields(func(ft byte, id int16) (bool, error) {
				switch {
				case id == 2 && ft == tString:
					var err error
					sdLocation, err = d.str()
					return true, err
				case id == 7 && ft == tStruct: // serdeInfo
					return true, d.fields(func(ft byte, id int16) (bool, error) {
						if id != 3 || ft != tMap {
							return false, nil
						}
						m, err := d.strMap()
						t.Location = m["path"]
						return true, err
					})
				}
				return false, nil
			})
		case id == 9 && ft == tMap:
			m, err := d.strMap()
			t.Provider = m["spark.sql.sources.provider"]
			return true, err
		}
		return false, nil
	})
	if t.Location == "" {
		t.Location = sdLocation
	}
	return t, err
}

// strMap reads a map<string,string>.
func (d *dec) strMap() (map[string]string, error) {
	kt, err := d.byte1()
	if err != nil {
		return nil, err
	}
	vt, err := d.byte1()
	if err != nil {
		return nil, err
	}
	n, err := d.length()
	if err != nil {
		return nil, err
	}
	if kt != tString || vt != tString {
		return nil, fmt.Errorf("thrift: map of types %d, %d where strings were expected", kt, vt)
	}
	m := make(map[string]string, n)
	for range n {
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		v, err := d.str()
		if err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, nil
}

// call sends method with the arguments args writes, then reads the result
// struct, handing each field to result: field 0 is the success value, the
// others the method's exceptions; result returns a non-empty message for
// an exception that is an error.
func (c *Client) call(ctx context.Context, method string, args func(*enc), result func(*dec, int16) (string, error)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(defaultTimeout)
	}
	if c.conn == nil {
		dialer := net.Dialer{Deadline: deadline}
		conn, err := dialer.DialContext(ctx, "tcp", c.addr)
		if err != nil {
			return err
		}
		c.conn, c.r = conn, bufio.NewReader(conn)
	}
	_ = c.conn.SetDeadline(deadline)
	// A call under way ends when ctx does: the connection's deadline
	// moves to now, which fails its read or write.
	conn := c.conn
	defer context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })()
	c.seq++
	e := &enc{}
	e.message(method, c.seq)
	args(e)
	e.stop()
	err := c.exchange(e.b, result)
	if err != nil && ctx.Err() != nil {
		// The deadline moved by ctx's end: say why.
		err = fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	if err != nil {
		// The connection may be anywhere in an answer: start anew.
		_ = c.conn.Close()
		c.conn = nil
	}
	return err
}

// exchange writes a call and reads its answer.
func (c *Client) exchange(call []byte, result func(*dec, int16) (string, error)) error {
	if _, err := c.conn.Write(call); err != nil {
		return err
	}
	d := &dec{r: c.r}
	if err := d.reply(c.seq); err != nil {
		return err
	}
	var refused string
	err := d.fields(func(t byte, id int16) (bool, error) {
		if t != tStruct {
			return false, nil
		}
		msg, err := result(d, id)
		if msg != "" && refused == "" {
			refused = msg
		}
		return true, err
	})
	if err != nil {
		return err
	}
	if refused != "" {
		return errors.New(refused)
	}
	return nil
}

// providerName names a table's provider for messages.
func providerName(p string) string {
	if p == "" {
		return "hive"
	}
	return p
}
