package blobstore

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestContentAddressedFiles(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "blobs")
	s, err := Open(ctx, "", dir)
	require.NoError(t, err)
	defer s.Close()

	sum, err := s.Put(ctx, []byte("<h1>hello</h1>"))
	require.NoError(t, err)
	require.Equal(t, Sum([]byte("<h1>hello</h1>")), sum)
	again, err := s.Put(ctx, []byte("<h1>hello</h1>"))
	require.NoError(t, err)
	require.Equal(t, sum, again)

	got, err := s.Get(ctx, sum)
	require.NoError(t, err)
	require.Equal(t, "<h1>hello</h1>", string(got))
	r, err := s.Open(ctx, sum)
	require.NoError(t, err)
	streamed, _ := io.ReadAll(r)
	require.NoError(t, r.Close())
	require.Equal(t, got, streamed)

	// Stored once: one file under the sum, and no sidecars.
	var files []string
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			files = append(files, filepath.Base(p))
		}
		return err
	}))
	require.Equal(t, []string{sum}, files)

	_, err = s.Get(ctx, Sum([]byte("absent")))
	require.ErrorIs(t, err, ErrNotFound)
	_, err = s.Get(ctx, "../../etc/passwd")
	require.ErrorIs(t, err, ErrNotFound)
}

func TestUploadsAreBounded(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "file://"+t.TempDir()+"?no_tmp_dir=1", "")
	require.NoError(t, err)
	defer s.Close()

	n, err := s.PutUpload(ctx, "upl_1", strings.NewReader("0123456789"), 10)
	require.NoError(t, err)
	require.EqualValues(t, 10, n)
	r, err := s.OpenUpload(ctx, "upl_1")
	require.NoError(t, err)
	b, _ := io.ReadAll(r)
	require.NoError(t, r.Close())
	require.Equal(t, "0123456789", string(b))

	_, err = s.PutUpload(ctx, "upl_2", bytes.NewReader(make([]byte, 11)), 10)
	require.ErrorIs(t, err, ErrTooLarge)
	_, err = s.OpenUpload(ctx, "upl_2")
	require.ErrorIs(t, err, ErrNotFound, "a refused upload keeps nothing")

	require.NoError(t, s.DeleteUpload(ctx, "upl_1"))
	require.NoError(t, s.DeleteUpload(ctx, "upl_1"), "deleting twice is fine")
	_, err = s.OpenUpload(ctx, "upl_1")
	require.ErrorIs(t, err, ErrNotFound)
}

// TestS3CompatibleStorage runs the store against an S3 server in the
// process (gofakes3), through the same s3:// URL production uses.
func TestS3CompatibleStorage(t *testing.T) {
	backend := s3mem.New()
	faker := gofakes3.New(backend)
	srv := httptest.NewServer(faker.Server())
	defer srv.Close()
	require.NoError(t, backend.CreateBucket("reports"))
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")

	ctx := context.Background()
	s, err := Open(ctx, "s3://reports?endpoint="+srv.URL+"&region=us-east-1&use_path_style=true", "")
	require.NoError(t, err)
	defer s.Close()
	sum, err := s.Put(ctx, []byte("<h1>s3</h1>"))
	require.NoError(t, err)
	got, err := s.Get(ctx, sum)
	require.NoError(t, err)
	assert.Equal(t, "<h1>s3</h1>", string(got))
	_, err = s.Put(ctx, []byte("<h1>s3</h1>"))
	require.NoError(t, err, "stored once, found the second time")

	_, err = s.PutUpload(ctx, "upl_1-x", strings.NewReader("zip bytes"), 100)
	require.NoError(t, err)
	r, err := s.OpenUpload(ctx, "upl_1-x")
	require.NoError(t, err)
	b, _ := io.ReadAll(r)
	require.NoError(t, r.Close())
	assert.Equal(t, "zip bytes", string(b))
	_, err = s.PutUpload(ctx, "upl_2-x", bytes.NewReader(make([]byte, 101)), 100)
	require.ErrorIs(t, err, ErrTooLarge)
	_, err = s.OpenUpload(ctx, "upl_2-x")
	require.ErrorIs(t, err, ErrNotFound, "a refused upload keeps nothing in S3 either")
	require.NoError(t, s.DeleteUpload(ctx, "upl_1-x"))
	_, err = s.OpenUpload(ctx, "upl_1-x")
	require.ErrorIs(t, err, ErrNotFound)
}
