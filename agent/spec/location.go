package spec

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Schemes of a storage location URL.
const (
	// SchemeFile is a local folder: file:///absolute/path.
	SchemeFile = "file"
	// SchemeS3 is Amazon S3 or an S3-compatible store.
	SchemeS3 = "s3"
	// SchemeGS is Google Cloud Storage.
	SchemeGS = "gs"
	// SchemeAzBlob is Azure Blob Storage.
	SchemeAzBlob = "azblob"
	// SchemeABFSS is Azure Data Lake Storage Gen2, reached through the blob
	// API of the same account.
	SchemeABFSS = "abfss"
)

// abfssHostSuffix ends the host of an abfss URL: <account>.dfs.core.windows.net.
const abfssHostSuffix = ".dfs.core.windows.net"

// LocationForm is the shape of the URLs of one storage location scheme.
type LocationForm struct {
	// Scheme is the URL scheme, one of the Scheme constants.
	Scheme string
	// Form shows the URL with placeholders; optional parts are in brackets.
	Form string
}

// LocationForms lists the URL forms a storage_location may take, one per
// scheme; an absolute local path is accepted too.
var LocationForms = []LocationForm{
	{SchemeFile, "file:///absolute/path"},
	{SchemeS3, "s3://bucket[/prefix]"},
	{SchemeGS, "gs://bucket[/prefix]"},
	{SchemeAzBlob, "azblob://container[/prefix]"},
	{SchemeABFSS, "abfss://container@account" + abfssHostSuffix + "[/prefix]"},
}

// locationForm returns the form of scheme's URLs, or "" for a scheme that is
// not one of [LocationForms].
func locationForm(scheme string) string {
	i := slices.IndexFunc(LocationForms, func(f LocationForm) bool { return f.Scheme == scheme })
	if i < 0 {
		return ""
	}
	return LocationForms[i].Form
}

// locationURL returns location as a URL, or nil when it is a local path: no
// scheme, a one-letter scheme (a Windows drive letter) or no URL at all, as
// the agent's table store tells them apart.
func locationURL(location string) *url.URL {
	u, err := url.Parse(location)
	if err != nil || u.Scheme == "" || len(u.Scheme) == 1 {
		return nil
	}
	return u
}

// LocalPath returns the folder on local disk that location names:
// location itself when it is a path, the path of a file:// URL; ok is
// false for any other URL (an object store's). This is the one test of
// whether a location is on local disk, for the agent's table store and its
// flags as for validation.
func LocalPath(location string) (dir string, ok bool) {
	u := locationURL(location)
	switch {
	case u == nil:
		return location, true
	case u.Scheme == SchemeFile:
		return u.Path, true
	}
	return "", false
}

// JoinLocation joins path elements under root, a local path or a storage
// location URL: a local path is joined with [filepath.Join]; a URL keeps its
// scheme, host (bucket or container), user (an abfss container) and query
// parameters, which configure the object store's driver, and gets the
// elements appended to its path. For example
//
//	JoinLocation("s3://lake/raw?endpoint=http://minio:9000", "main", "sales", "orders")
//
// returns "s3://lake/raw/main/sales/orders?endpoint=http://minio:9000". A
// table lives at JoinLocation(root, catalog, schema, table).
func JoinLocation(root string, elem ...string) string {
	u := locationURL(root)
	if u == nil {
		return filepath.Join(append([]string{root}, elem...)...)
	}
	joined := *u
	joined.Path = path.Join(append([]string{"/", u.Path}, elem...)...)
	joined.RawPath = ""
	return joined.String()
}

// LocationUnder reports whether location lies under root: both name the
// same store (the local disk, or the same scheme and bucket, container or
// abfss container and account) and root's path is a prefix of location's
// at a segment boundary (s3://lake/raw holds s3://lake/raw/x but not
// s3://lake/rawdata). Query parameters are ignored, so a root may carry its
// driver's options (Validate refuses them on a storage_location). Local paths
// are cleaned, and file:///x is the same as /x. A URL path with an empty,
// "." or ".." segment is under nothing, since an object store keeps such
// segments literally; so is an empty location or root.
//
// The agent uses it to accept a pipeline's storage_location only under one
// of the roots it allows.
func LocationUnder(location, root string) bool {
	ls, lp, ok := splitLocation(location)
	if !ok {
		return false
	}
	rs, rp, ok := splitLocation(root)
	if !ok || ls != rs {
		return false
	}
	return lp == rp || strings.HasPrefix(lp, strings.TrimSuffix(rp, "/")+"/")
}

// splitLocation returns the store of location ("file://" for the local
// disk, else "<scheme>://<bucket>" or "abfss://<container>@<host>") and its path, which starts
// with "/" and ends without one, but for the root itself. ok is false for an
// empty location and for a URL path with an empty, "." or ".." segment.
func splitLocation(location string) (store, p string, ok bool) {
	if location == "" {
		return "", "", false
	}
	u := locationURL(location)
	switch {
	case u == nil:
		return "file://", filepath.ToSlash(filepath.Clean(location)), true
	case u.Scheme == SchemeFile:
		return "file://" + u.Host, path.Clean("/" + u.Path), true
	case oddSegment(u.Path):
		return "", "", false
	}
	host := u.Host
	if u.Scheme == SchemeABFSS && u.User != nil {
		// The account is a DNS name, so its case does not matter; the
		// container's does.
		host = u.User.Username() + "@" + strings.ToLower(host)
	}
	return u.Scheme + "://" + host, "/" + strings.Trim(u.Path, "/"), true
}

// oddSegment reports whether the URL path p has an empty, "." or ".."
// segment between its leading and trailing slashes.
func oddSegment(p string) bool {
	trimmed := strings.Trim(p, "/")
	return trimmed != "" && slices.ContainsFunc(strings.Split(trimmed, "/"),
		func(s string) bool { return s == "" || s == "." || s == ".." })
}

// validateStorageLocation checks a storage_location: empty (the agent's
// warehouse), an absolute local path, or a URL of one of [LocationForms]
// without query parameters, fragment or user information. A password in
// the URL is not repeated in the message.
func validateStorageLocation(col collector, attr, v string) {
	if v == "" {
		return
	}
	problem := storageLocationProblem(v)
	if problem == "" {
		return
	}
	if u := locationURL(v); u != nil && u.User != nil && hasPassword(u.User) {
		v = u.Redacted()
	}
	col.add(attr, "%q %s", v, problem)
}

// storageLocationProblem returns what is wrong with the non-empty storage
// location v, as the end of a sentence that starts with v, or "".
func storageLocationProblem(v string) string {
	const anyForm = "write an absolute path (/srv/lake) or a URL such as s3://bucket/prefix"
	u := locationURL(v)
	if u == nil {
		if strings.HasPrefix(v, "/") {
			return ""
		}
		var urlErr *url.Error
		if _, err := url.Parse(v); errors.As(err, &urlErr) && strings.Contains(v, "://") {
			return fmt.Sprintf("is not a valid URL (%v); %s", urlErr.Err, anyForm)
		}
		return "is not an absolute path; " + anyForm
	}
	form := locationForm(u.Scheme)
	switch {
	case form == "":
		schemes := make([]string, len(LocationForms))
		for i, f := range LocationForms {
			schemes[i] = f.Scheme
		}
		return fmt.Sprintf("has scheme %q; use an absolute path or a URL with scheme %s",
			u.Scheme, strings.Join(schemes, ", "))
	case u.Opaque != "":
		return "is not of the form " + form
	case u.RawQuery != "" || u.ForceQuery:
		return "has query parameters: options of the object store driver (endpoint, region) belong to the agent's " +
			"--warehouse or --warehouse-allow root, not to the pipeline"
	case u.Fragment != "":
		return fmt.Sprintf("has a fragment (#%s); remove it: %s", u.Fragment, form)
	case u.User != nil && (u.Scheme != SchemeABFSS || hasPassword(u.User)):
		return "has user information: credentials come from the agent's environment, never from the pipeline; write " + form
	}
	switch u.Scheme {
	case SchemeFile:
		if u.Host != "" || u.Path == "" {
			return "is not of the form " + form + " (three slashes, then the absolute path)"
		}
		return "" // a local path, cleaned where it is used
	case SchemeABFSS:
		account, found := strings.CutSuffix(strings.ToLower(u.Host), abfssHostSuffix)
		if u.User == nil || u.User.Username() == "" || !found || account == "" || strings.Contains(account, ".") {
			return "is not of the form " + form
		}
	default:
		if u.Host == "" {
			return "names no bucket; write " + form
		}
		if strings.Contains(u.Host, ":") {
			return "has a port: the endpoint of an S3-compatible store belongs to the agent's --warehouse or " +
				"--warehouse-allow root (?endpoint=...), not to the pipeline; write " + form
		}
	}
	if oddSegment(u.Path) {
		return `has an empty, "." or ".." path segment, which an object store keeps literally; ` +
			"write the prefix as names separated by single slashes: " + form
	}
	return ""
}

// hasPassword reports whether user information carries a password.
func hasPassword(user *url.Userinfo) bool {
	_, set := user.Password()
	return set
}
