package registration

import (
	"path/filepath"
	"testing"
)

func TestMetastoreLocation(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ location, want string }{
		{dir, "file:" + filepath.ToSlash(dir)},
		{dir + "/", "file:" + filepath.ToSlash(dir)},
		{"file://" + dir, "file:" + filepath.ToSlash(dir)},
		{"s3://bucket/wh/main/raw/t?endpoint=http://127.0.0.1:8333&region=us-east-1", "s3a://bucket/wh/main/raw/t"},
		{"gs://bucket/wh/t/", "gs://bucket/wh/t"},
	} {
		if got := metastoreLocation(tt.location); got != tt.want {
			t.Errorf("metastoreLocation(%q) = %q, want %q", tt.location, got, tt.want)
		}
	}
}
