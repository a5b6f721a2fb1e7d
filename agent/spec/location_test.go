package spec

import (
	"fmt"
	"testing"
)

// storageLocationCases are the TestPipelineValidate cases of
// storage_location: the forms it accepts, then every rule it breaks.
func storageLocationCases() []pipelineCase {
	valid := []string{
		"/srv/lake",
		"/srv/lake/",
		"/srv/../lake",
		"/data/100%",
		"file:///srv/lake",
		"file:/srv/lake",
		"s3://lake",
		"s3://lake/raw/",
		"S3://lake/raw",
		"gs://lake/raw",
		"azblob://lake/raw",
		"abfss://lake@account.dfs.core.windows.net",
		"abfss://lake@account.dfs.core.windows.net/raw/sales",
	}
	invalid := []struct{ location, detail string }{
		{"lake/raw", "is not an absolute path; write an absolute path (/srv/lake) or a URL"},
		{"C:/lake", "is not an absolute path"},
		{"s3://lake/%zz", `is not a valid URL (invalid URL escape "%zz")`},
		{"hdfs://nn/lake", `has scheme "hdfs"; use an absolute path or a URL with scheme file, s3, gs, azblob, abfss`},
		{"s3:lake/raw", "is not of the form s3://bucket[/prefix]"},
		{"s3://b/x?endpoint=http://minio:9000", "has query parameters: options of the object store driver (endpoint, region) " +
			"belong to the agent's --warehouse or --warehouse-allow root, not to the pipeline"},
		{"s3://b/x?", "has query parameters"},
		{"gs://b/x#v2", "has a fragment (#v2); remove it: gs://bucket[/prefix]"},
		{"s3://key@lake/raw", "has user information: credentials come from the agent's environment"},
		{"azblob://user@lake/raw", "has user information"},
		{"file://srv/lake", "is not of the form file:///absolute/path (three slashes, then the absolute path)"},
		{"file://", "is not of the form file:///absolute/path"},
		{"s3:///raw", "names no bucket; write s3://bucket[/prefix]"},
		{"azblob:///raw", "names no bucket; write azblob://container[/prefix]"},
		{"s3://lake:9000/raw", "has a port: the endpoint of an S3-compatible store belongs to the agent's --warehouse"},
		{"abfss://account.dfs.core.windows.net/raw", "is not of the form abfss://container@account.dfs.core.windows.net[/prefix]"},
		{"abfss://lake@account.blob.core.windows.net/raw", "is not of the form abfss://"},
		{"abfss://lake@.dfs.core.windows.net/raw", "is not of the form abfss://"},
		{"s3://lake/raw/../other", `has an empty, "." or ".." path segment, which an object store keeps literally`},
		{"gs://lake/./raw", `has an empty, "." or ".." path segment`},
		{"s3://lake/a//b", "has an empty"},
	}
	var cases []pipelineCase
	for _, loc := range valid {
		cases = append(cases, pipelineCase{"storage_location " + loc, func(p *Pipeline) { p.StorageLocation = loc }, "", ""})
	}
	// A password is not repeated in the message.
	passwords := []struct{ location, shown string }{
		{"s3://key:secret@lake/raw", "s3://key:xxxxx@lake/raw"},
		{"abfss://lake:key@account.dfs.core.windows.net/raw", "abfss://lake:xxxxx@account.dfs.core.windows.net/raw"},
	}
	for _, c := range passwords {
		cases = append(cases, pipelineCase{"storage_location " + c.shown, func(p *Pipeline) { p.StorageLocation = c.location },
			"storage_location", fmt.Sprintf("%q has user information: credentials come from the agent's environment", c.shown)})
	}
	for _, c := range invalid {
		cases = append(cases, pipelineCase{"storage_location " + c.location, func(p *Pipeline) { p.StorageLocation = c.location },
			"storage_location", fmt.Sprintf("%q %s", c.location, c.detail)})
	}
	return cases
}

func TestJoinLocation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		root string
		elem []string
		want string
	}{
		{"/srv/lake", []string{"main", "sales", "orders"}, "/srv/lake/main/sales/orders"},
		{"/srv/lake/", []string{"main"}, "/srv/lake/main"},
		{"warehouse", []string{"main", "sales"}, "warehouse/main/sales"},
		{"/data/100%", []string{"main"}, "/data/100%/main"},
		{"file:///srv/lake", []string{"main", "sales"}, "file:///srv/lake/main/sales"},
		{"s3://lake", []string{"main", "sales", "orders"}, "s3://lake/main/sales/orders"},
		{"s3://lake/", []string{"main"}, "s3://lake/main"},
		{"s3://lake/raw?endpoint=http://x&use_path_style=true", []string{"main", "sales", "orders"},
			"s3://lake/raw/main/sales/orders?endpoint=http://x&use_path_style=true"},
		{"gs://lake/raw/", []string{"main", "sales"}, "gs://lake/raw/main/sales"},
		{"azblob://lake/raw?protocol=http&domain=127.0.0.1:10000", []string{"main"},
			"azblob://lake/raw/main?protocol=http&domain=127.0.0.1:10000"},
		{"abfss://lake@account.dfs.core.windows.net/raw", []string{"main", "sales"},
			"abfss://lake@account.dfs.core.windows.net/raw/main/sales"},
		{"s3://lake/my%20data", []string{"main"}, "s3://lake/my%20data/main"},
		{"s3://lake/raw", nil, "s3://lake/raw"},
	}
	for _, tt := range tests {
		if got := JoinLocation(tt.root, tt.elem...); got != tt.want {
			t.Errorf("JoinLocation(%q, %q) = %q, want %q", tt.root, tt.elem, got, tt.want)
		}
	}
}

func TestLocationUnder(t *testing.T) {
	t.Parallel()
	under := []struct{ location, root string }{
		{"/srv/lake", "/srv/lake"},
		{"/srv/lake/", "/srv/lake"},
		{"/srv/lake/sales", "/srv/lake"},
		{"/srv/lake/sales", "/srv/lake/"},
		{"/srv/lake/a/../sales", "/srv/lake"},
		{"/srv/lake/sales", "/"},
		{"file:///srv/lake/sales", "/srv/lake"},
		{"/srv/lake/sales", "file:///srv/lake"},
		{"file:///srv/lake/sales", "file:///srv/lake/"},
		{"s3://lake", "s3://lake"},
		{"s3://lake/raw", "s3://lake"},
		{"s3://lake/raw", "s3://lake/"},
		{"s3://lake/raw/sales", "s3://lake/raw"},
		{"s3://lake/raw/sales", "s3://lake/raw?endpoint=http://minio:9000&use_path_style=true"},
		{"s3://lake/raw/", "s3://lake/raw"},
		{"S3://lake/raw/sales", "s3://lake/raw"},
		{"gs://lake/raw/sales", "gs://lake/raw"},
		{"azblob://lake/raw/sales", "azblob://lake"},
		{"abfss://lake@account.dfs.core.windows.net/raw/sales", "abfss://lake@account.dfs.core.windows.net/raw"},
		{"abfss://lake@Account.DFS.core.windows.net/raw/sales", "abfss://lake@account.dfs.core.windows.net/raw"},
	}
	notUnder := []struct{ location, root string }{
		{"/srv/lakehouse", "/srv/lake"},
		{"/srv/lake/../other", "/srv/lake"},
		{"/srv", "/srv/lake"},
		{"srv/lake/sales", "/srv/lake"},
		{"", "/srv/lake"},
		{"/srv/lake", ""},
		{"s3://lake/rawdata", "s3://lake/raw"},
		{"s3://lake/raw", "s3://lake/raw/sales"},
		{"s3://other/raw", "s3://lake/raw"},
		{"s3://lake/raw", "/lake/raw"},
		{"gs://lake/raw", "s3://lake/raw"},
		{"s3://lake/raw/../secret", "s3://lake/raw"},
		{"s3://lake/raw/./x", "s3://lake/raw"},
		{"s3://lake/raw//x", "s3://lake/raw"},
		{"azblob://lake/raw", "abfss://lake@account.dfs.core.windows.net/raw"},
		{"abfss://other@account.dfs.core.windows.net/raw", "abfss://lake@account.dfs.core.windows.net"},
		{"abfss://Lake@account.dfs.core.windows.net/raw", "abfss://lake@account.dfs.core.windows.net"},
		{"abfss://lake@other.dfs.core.windows.net/raw", "abfss://lake@account.dfs.core.windows.net"},
		{"file://host/srv/lake", "/srv/lake"},
	}
	for _, tt := range under {
		if !LocationUnder(tt.location, tt.root) {
			t.Errorf("LocationUnder(%q, %q) = false, want true", tt.location, tt.root)
		}
	}
	for _, tt := range notUnder {
		if LocationUnder(tt.location, tt.root) {
			t.Errorf("LocationUnder(%q, %q) = true, want false", tt.location, tt.root)
		}
	}
}

func ExampleJoinLocation() {
	root := "s3://lake/raw?endpoint=http://minio:9000&use_path_style=true"
	fmt.Println(JoinLocation(root, "main", "sales", "orders"))
	fmt.Println(JoinLocation("/srv/lake", "main", "sales", "orders"))
	// Output:
	// s3://lake/raw/main/sales/orders?endpoint=http://minio:9000&use_path_style=true
	// /srv/lake/main/sales/orders
}

func ExampleLocationUnder() {
	root := "s3://lake/raw?endpoint=http://minio:9000"
	fmt.Println(LocationUnder("s3://lake/raw/sales", root))
	fmt.Println(LocationUnder("s3://lake/rawdata", root))
	// Output:
	// true
	// false
}
