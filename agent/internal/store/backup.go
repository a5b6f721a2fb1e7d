package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
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

// restoreMarker names the file [Restore] writes in a data folder before
// it changes anything there and removes once it is done: a folder holding
// it holds part of a backup, which Open and Backup refuse.
const restoreMarker = ".restore-in-progress"

// checkNoRestoreMarker returns an error, saying what to do, when a restore
// into the data folder dir was cut short.
func checkNoRestoreMarker(dir string) error {
	_, err := os.Lstat(filepath.Join(dir, restoreMarker))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking the data folder for an unfinished restore: %w", err)
	}
	return fmt.Errorf("data folder %s holds part of a backup only: a restore into it was cut short (%s is there); "+
		"run `tributary-agent state restore --force` again with the backup", dir, filepath.Join(dir, restoreMarker))
}

// BackupOptions says what [Backup] does with the key of the connections'
// secrets.
type BackupOptions struct {
	// KeyFile is the file of that key, as the agent is given it; "" means
	// the data folder's [DefaultKeyFile].
	KeyFile string
	// IncludeKey puts the key in the backup.
	IncludeKey bool
}

// BackupResult says what [Backup] did.
type BackupResult struct {
	// Objects is how many objects the backup holds.
	Objects int
	// Sealed is how many of its connections held a secret in plain text
	// in the data folder, which the backup holds encrypted.
	Sealed int
	// KeyFile is the file of the key that encrypted them, or that the
	// backup holds; "" when the backup needed no key.
	KeyFile string
	// KeyGenerated says that Backup generated KeyFile, in the data folder,
	// to encrypt them, as the agent's next start would have.
	KeyGenerated bool
}

// Backup writes to w a copy of the desired state in the data folder dir:
// its format and every connection, pipeline, fanout schema and Kafka sink,
// as stored, the connections' secrets encrypted. A secret the folder
// stores in plain text (an agent older than the secrets key wrote it) is
// encrypted in the backup with the folder's key, as the agent's next start
// would encrypt it in the folder; when the folder has no key yet, Backup
// generates it there, as that start would: the backup never holds a
// secret in plain text. Otherwise it changes nothing in dir; the caller
// keeps agents off it (the data folder's lock) so that the copy is of one
// moment.
//
// With opts.IncludeKey, the backup holds the key too. Otherwise it holds
// none, and restoring it needs the key the agent used: a backup with the
// key reveals every secret to whoever reads it, which is what keeping the
// key apart from the data folder avoids.
func Backup(dir string, w io.Writer, opts BackupOptions) (BackupResult, error) {
	var res BackupResult
	if _, err := os.Stat(dir); err != nil {
		return res, fmt.Errorf("data folder: %w", err)
	}
	if err := checkNoRestoreMarker(dir); err != nil {
		return res, err
	}
	format, err := readLocalFormat(dir)
	if err != nil {
		return res, err
	}
	var key *secretsKey
	loadFolderKey := func() (*secretsKey, error) {
		if key == nil {
			k, err := loadKey(dir, opts.KeyFile)
			if err != nil {
				return nil, err
			}
			key, res.KeyFile, res.KeyGenerated = k, k.file, k.generated
		}
		return key, nil
	}
	doc := backupDoc{Format: format, Created: time.Now().UTC(), Objects: map[string]map[string]json.RawMessage{}}
	for _, k := range backupKinds() {
		stored, err := k.storedObjects(dir)
		if err != nil {
			return res, err
		}
		objects := map[string]json.RawMessage{}
		for name, data := range stored {
			if _, ok := k.(*Collection[spec.Connection]); ok {
				var sealed bool
				if data, sealed, err = sealPlainSecrets(name, data, loadFolderKey); err != nil {
					return res, err
				}
				if sealed {
					res.Sealed++
				}
			}
			objects[name] = bytes.TrimSpace(data)
		}
		doc.Objects[k.kindName()] = objects
		res.Objects += len(objects)
	}
	if opts.IncludeKey {
		// Read, never generated here: a new key would open none of the
		// folder's secrets.
		keyFile := opts.KeyFile
		if keyFile == "" {
			keyFile = filepath.Join(dir, DefaultKeyFile)
		}
		raw, err := readKeyFile(keyFile)
		if err != nil {
			return res, err
		}
		doc.SecretsKey, res.KeyFile = encodeKey(raw), keyFile
	}
	data, err := encode(&doc)
	if err != nil {
		return res, fmt.Errorf("encoding the backup: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		return res, fmt.Errorf("writing the backup: %w", err)
	}
	return res, nil
}

// sealPlainSecrets returns data, the stored connection name, with every
// secret it holds in plain text encrypted with the key folderKey returns,
// which it calls only then, and whether there was such a secret.
func sealPlainSecrets(name string, data []byte, folderKey func() (*secretsKey, error)) ([]byte, bool, error) {
	c, err := decode[spec.Connection](data)
	if err != nil {
		return nil, false, fmt.Errorf("reading connection %q: %w", name, err)
	}
	if !hasPlainSecret(&c) {
		return data, false, nil
	}
	key, err := folderKey()
	if err == nil {
		_, err = key.Unseal(&c)
	}
	if err == nil {
		err = key.Seal(&c)
	}
	if err == nil {
		data, err = encode(&c)
	}
	if err != nil {
		return nil, false, fmt.Errorf("encrypting the secrets connection %q stores in plain text: %w", name, err)
	}
	return data, true, nil
}

// RestoreOptions says how [Restore] treats the data folder it writes to.
type RestoreOptions struct {
	// Force replaces the desired state the folder holds already.
	Force bool
	// KeyFile is the file of the key the agent will be given; "" means
	// the backup's key, if it holds one, or else the data folder's
	// [DefaultKeyFile], if it exists.
	KeyFile string
}

// RestoreResult says what [Restore] did.
type RestoreResult struct {
	// Objects is how many objects it wrote; Format, the data folder's
	// format they are in.
	Objects, Format int
	// KeyFile is the secrets key file it wrote from the backup, or ""
	// when the backup held no key.
	KeyFile string
	// Checked says the backup's connections were decrypted with the key
	// the agent will use before anything was written; false when no key
	// was at hand.
	Checked bool
}

// Restore writes the desired state of a backup [Backup] made, read from r,
// into the data folder dir. It checks the whole backup before it writes
// anything: a backup of a newer format than [LocalFormat] is refused, as
// Open refuses such a folder, and so is one whose connections the key the
// agent will use (see [RestoreOptions.KeyFile]) does not decrypt. A folder
// that holds desired state already (an object, or a secrets key other
// than the backup's) is refused unless opts.Force is set; with it, the
// folder's objects the backup lacks are removed and its key replaced by
// the backup's, if the backup has one. A folder holding format.json alone,
// which an agent started once writes, holds no state. The caller keeps
// agents off dir (the data folder's lock).
//
// Before it changes anything in dir, Restore writes a marker file there,
// which it removes last, once the whole backup is written: Open and Backup
// refuse a folder holding it, the state of a restore cut short; restore
// again, with force.
func Restore(dir string, r io.Reader, opts RestoreOptions) (RestoreResult, error) {
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
	if res.Checked, err = checkBackupKey(dir, doc.Objects, key, opts.KeyFile); err != nil {
		return res, err
	}
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return res, fmt.Errorf("creating the data folder: %w", err)
	}
	if !opts.Force {
		if err := checkEmpty(dir, kinds, key); err != nil {
			return res, err
		}
	}
	marker := filepath.Join(dir, restoreMarker)
	err = WriteFileAtomic(marker, func(w io.Writer) error {
		_, err := io.WriteString(w, "tributary-agent state restore is writing a backup into this folder; if it stopped, run it again with --force\n")
		return err
	})
	if err != nil {
		return res, fmt.Errorf("marking the data folder as being restored: %w", err)
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
	if err := os.Remove(marker); err != nil {
		return res, fmt.Errorf("removing %s, the last step of the restore: %w", marker, err)
	}
	if err := syncDir(dir); err != nil {
		return res, fmt.Errorf("removing %s, the last step of the restore: %w", marker, err)
	}
	return res, nil
}

// checkBackupKey decrypts every secret of objects, a backup's by kind and
// name, with the key the agent will use on the data folder dir: the one in
// keyFile if set, else backupKey, the backup's own, if set, else the
// folder's key file if it exists. It reports whether there was a key to
// check with.
func checkBackupKey(dir string, objects map[string]map[string]json.RawMessage, backupKey []byte, keyFile string) (bool, error) {
	raw, source := backupKey, "the backup's secrets key"
	if keyFile == "" && backupKey == nil {
		keyFile = filepath.Join(dir, DefaultKeyFile)
		if _, err := os.Lstat(keyFile); errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
	}
	if keyFile != "" {
		var err error
		if raw, err = readKeyFile(keyFile); err != nil {
			return false, err
		}
		source = keyFile
	}
	key, err := newSecretsKey(raw, source)
	if err != nil {
		return false, err
	}
	for _, k := range newStore(key, nil).kinds() {
		for _, name := range slices.Sorted(maps.Keys(objects[k.kindName()])) {
			if err := k.unsealStored(objects[k.kindName()][name]); err != nil {
				return false, fmt.Errorf("the backup's %s %q does not open with the key the agent will use, nothing was written: %w",
					strings.TrimSuffix(k.kindName(), "s"), name, err)
			}
		}
	}
	return true, nil
}

// checkEmpty returns an error unless the data folder dir holds no desired
// state: no object of kinds, and no secrets key other than key. Its
// format.json alone is no state: an agent started once, which stored
// nothing, leaves it.
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
	if err := syncDir(folder); err != nil {
		return fmt.Errorf("restoring %s: %w", k.kindName(), err)
	}
	return nil
}
