package blobstore

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
