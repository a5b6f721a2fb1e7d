package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A backup of a single agent's data folder is one JSON document:
//
//	{"format": 2, "created": "...", "objects": {"connections": {"<name>": {...}}, "pipelines": {...}, ...},
//	 "secrets_key": "<base64>"}
//
// format is the data folder's format the objects are written in; the
// objects are as the folder stores them, secrets encrypted; secrets_key is
// there only when asked for (see [Backup]). It covers the desired state
// alone: the tables, and with them every table's position in its topics
// (the offsets each Delta log records with its files), stay where they
// are, and a restored agent resumes every table from its own log.

// backupDoc is a backup.
type backupDoc struct {
	Format     int                                   `json:"format"`
	Created    time.Time                             `json:"created"`
	Objects    map[string]map[string]json.RawMessage `json:"objects"`
	SecretsKey string                                `json:"secrets_key,omitempty"`
}

// backupKinds returns the collections a data folder holds, to read and
// write their folders without opening the state.
func backupKinds() []kind { return newStore(nil, nil).kinds() }

// Backup writes to w a copy of the desired state in the data folder dir:
// its format and every connection, pipeline, fanout schema and Kafka sink,
// as stored (the connections' secrets encrypted). It changes nothing in
// dir; the caller keeps agents off it (the data folder's lock) so that the
// copy is of one moment. It returns how many objects it copied.
//
// With keyFile set, the backup holds the secrets key in that file too.
// Otherwise it holds none, and restoring it needs the key the agent used:
// a backup with the key reveals every secret to whoever reads it, which is
// what keeping the key apart from the data folder avoids.
func Backup(dir string, w io.Writer, keyFile string) (int, error) {
	if _, err := os.Stat(dir); err != nil {
		return 0, fmt.Errorf("data folder: %w", err)
	}
	format, err := readLocalFormat(dir)
	if err != nil {
		return 0, err
	}
	doc := backupDoc{Format: format, Created: time.Now().UTC(), Objects: map[string]map[string]json.RawMessage{}}
	n := 0
	for _, k := range backupKinds() {
		stored, err := k.storedObjects(dir)
		if err != nil {
			return 0, err
		}
		objects := map[string]json.RawMessage{}
		for name, data := range stored {
			objects[name] = bytes.TrimSpace(data)
		}
		doc.Objects[k.kindName()] = objects
		n += len(objects)
	}
	if keyFile != "" {
		key, err := readKeyFile(keyFile)
		if err != nil {
			return 0, err
		}
		doc.SecretsKey = encodeKey(key)
	}
	data, err := encode(&doc)
	if err != nil {
		return 0, err
	}
	if _, err := w.Write(data); err != nil {
		return 0, fmt.Errorf("writing the backup: %w", err)
	}
	return n, nil
}

// RestoreResult says what [Restore] did.
type RestoreResult struct {
	// Objects is how many objects it wrote; Format, the data folder's
	// format they are in.
	Objects, Format int
	// KeyFile is the secrets key file it wrote from the backup, or ""
	// when the backup held no key.
	KeyFile string
}

// Restore writes the desired state of a backup [Backup] made, read from r,
// into the data folder dir. It checks the whole backup before it writes
// anything: a backup of a newer format than [LocalFormat] is refused, as
// Open refuses such a folder. A folder that holds desired state already
// (an object, format.json, or a secrets key other than the backup's) is
// refused unless force is set; with force, its objects the backup lacks are
// removed and its key replaced by the backup's, if the backup has one. The
// caller keeps agents off dir (the data folder's lock).
//
// format.json is written last, after removing the folder's own first, so
// that a restore cut short leaves a folder that Open reads as format 1:
// restore again, with force.
func Restore(dir string, r io.Reader, force bool) (RestoreResult, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return RestoreResult{}, fmt.Errorf("reading the backup: %w", err)
	}
	// The format first, so that a newer backup is refused for what it is;
	// then the whole document, strictly, as the store reads its files.
	var format struct{ Format int }
	if err := json.Unmarshal(data, &format); err != nil {
		return RestoreResult{}, fmt.Errorf("reading the backup: %w", err)
	}
	if format.Format < 1 {
		return RestoreResult{}, errors.New("the backup names no data folder format: it is not a backup of tributary-agent state backup")
	}
	if err := newerFormat("the backup", format.Format, LocalFormat, "restore it with the agent version that made it, or a newer one"); err != nil {
		return RestoreResult{}, err
	}
	doc, err := decode[backupDoc](data)
	if err != nil {
		return RestoreResult{}, fmt.Errorf("reading the backup: %w", err)
	}
	kinds := backupKinds()
	res := RestoreResult{Format: doc.Format}
	for kindName, objects := range doc.Objects {
		i := slices.IndexFunc(kinds, func(k kind) bool { return k.kindName() == kindName })
		if i < 0 {
			return res, fmt.Errorf("the backup holds objects of an unknown kind %q", kindName)
		}
		for name, data := range objects {
			if err := kinds[i].checkStored(name, data); err != nil {
				return res, fmt.Errorf("the backup's %s %q: %w", kindName, name, err)
			}
		}
		res.Objects += len(objects)
	}
	var key []byte
	if doc.SecretsKey != "" {
		var err error
		if key, err = decodeKey([]byte(doc.SecretsKey)); err != nil {
			return res, fmt.Errorf("the backup's secrets key: %w", err)
		}
	}
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return res, fmt.Errorf("creating the data folder: %w", err)
	}
	if !force {
		if err := checkEmpty(dir, kinds, key); err != nil {
			return res, err
		}
	}
	if err := os.Remove(filepath.Join(dir, formatFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return res, fmt.Errorf("removing the data folder's format.json: %w", err)
	}
	if key != nil {
		res.KeyFile = filepath.Join(dir, DefaultKeyFile)
		if err := writeFileAtomic(dir, DefaultKeyFile, []byte(encodeKey(key)+"\n")); err != nil {
			return res, fmt.Errorf("writing the secrets key: %w", err)
		}
	}
	for _, k := range kinds {
		if err := restoreKind(dir, k, doc.Objects[k.kindName()]); err != nil {
			return res, err
		}
	}
	if err := writeLocalFormat(dir, doc.Format); err != nil {
		return res, err
	}
	return res, nil
}

// checkEmpty returns an error unless the data folder dir holds no desired
// state: no object of kinds, no format.json, and no secrets key other than
// key.
func checkEmpty(dir string, kinds []kind, key []byte) error {
	var held []string
	for _, k := range kinds {
		names, err := objectFiles(filepath.Join(dir, k.kindName()))
		if err != nil {
			return err
		}
		for _, name := range names {
			held = append(held, k.kindName()+"/"+name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, formatFile)); err == nil {
		held = append(held, formatFile)
	}
	keyFile := filepath.Join(dir, DefaultKeyFile)
	if _, err := os.Lstat(keyFile); err == nil && key != nil {
		if have, err := readKeyFile(keyFile); err != nil || !bytes.Equal(have, key) {
			held = append(held, DefaultKeyFile+" (another key than the backup's)")
		}
	}
	if len(held) == 0 {
		return nil
	}
	if len(held) > 5 {
		held = append(held[:5], fmt.Sprintf("and %d more", len(held)-5))
	}
	return fmt.Errorf("data folder %s holds state already (%s): restore into an empty folder, or pass --force to replace it",
		dir, strings.Join(held, ", "))
}

// restoreKind makes the folder of kind k under dir hold objects, and
// nothing else.
func restoreKind(dir string, k kind, objects map[string]json.RawMessage) error {
	folder := filepath.Join(dir, k.kindName())
	if err := os.MkdirAll(folder, dirMode); err != nil {
		return fmt.Errorf("creating %s: %w", folder, err)
	}
	if err := os.Chmod(folder, dirMode); err != nil {
		return fmt.Errorf("restricting %s to its owner: %w", folder, err)
	}
	for _, name := range slices.Sorted(maps.Keys(objects)) {
		// As the store writes it: indented, and a newline.
		var data bytes.Buffer
		if err := json.Indent(&data, objects[name], "", "  "); err != nil {
			return fmt.Errorf("the backup's %s %q: %w", k.kindName(), name, err)
		}
		data.WriteByte('\n')
		if err := writeFileAtomic(folder, name+fileSuffix, data.Bytes()); err != nil {
			return fmt.Errorf("writing %s %q: %w", k.kindName(), name, err)
		}
	}
	names, err := objectFiles(folder)
	if err != nil {
		return err
	}
	for _, name := range names {
		if _, ok := objects[name]; ok {
			continue
		}
		if err := os.Remove(filepath.Join(folder, name+fileSuffix)); err != nil {
			return fmt.Errorf("removing %s %q, which the backup does not hold: %w", k.kindName(), name, err)
		}
	}
	return syncDir(folder)
}
