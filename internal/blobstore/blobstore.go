// Package blobstore keeps report files: content-addressed by SHA-256, so a
// file unchanged across versions is stored once, in a bucket opened by URL
// through gocloud.dev/blob (a local folder, or S3-compatible storage).
package blobstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/s3blob" // s3:// URLs
	"gocloud.dev/gcerrors"
)

// Store is a bucket of report files and uploads.
type Store struct {
	bucket *blob.Bucket
}

// ErrNotFound is returned for a key the bucket does not hold.
var ErrNotFound = errors.New("blob not found")

// Open opens the bucket at url: `s3://bucket?region=…&endpoint=…&use_path_style=true`
// for S3-compatible storage, `file:///path` for a folder. An empty url is
// the folder dir (created when missing), the default of `assent dev`.
func Open(ctx context.Context, url, dir string) (*Store, error) {
	if url == "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("blob folder %s: %w", dir, err)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		// Temporary files beside the blobs, so a rename never crosses
		// file systems; no sidecar files, since nothing reads attributes.
		b, err := fileblob.OpenBucket(abs, &fileblob.Options{NoTempDir: true, Metadata: fileblob.MetadataDontWrite, DirFileMode: 0o700})
		if err != nil {
			return nil, err
		}
		return &Store{bucket: b}, nil
	}
	b, err := blob.OpenBucket(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("open blob store %s: %w", redactURL(url), err)
	}
	return &Store{bucket: b}, nil
}

// redactURL drops the query, which may carry credentials, from an error.
func redactURL(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i]
	}
	return u
}

// Check reports whether the bucket answers and exists, for readiness.
func (s *Store) Check(ctx context.Context) error {
	ok, err := s.bucket.IsAccessible(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("the bucket does not exist")
	}
	return nil
}

// Close releases the bucket.
func (s *Store) Close() error { return s.bucket.Close() }

// Sum is the hex SHA-256 of data, a file's address in the store.
func Sum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// contentKey spreads files over 256 folders by the first byte of the sum.
func contentKey(sum string) string { return "sha256/" + sum[:2] + "/" + sum }

// Put stores data under its SHA-256 and returns the sum. Data already
// there is not written again.
func (s *Store) Put(ctx context.Context, data []byte) (string, error) {
	sum := Sum(data)
	key := contentKey(sum)
	ok, err := s.bucket.Exists(ctx, key)
	if err != nil {
		return "", err
	}
	if ok {
		return sum, nil
	}
	return sum, s.bucket.WriteAll(ctx, key, data, nil)
}

// Get returns the file with the given sum.
func (s *Store) Get(ctx context.Context, sum string) ([]byte, error) {
	if len(sum) != sha256.Size*2 {
		return nil, ErrNotFound
	}
	return s.read(ctx, contentKey(sum))
}

// Open returns a reader of the file with the given sum, for serving it
// without holding it whole. It seeks (a range is read by reopening the
// blob at its offset, once a read follows the seek).
func (s *Store) Open(ctx context.Context, sum string) (io.ReadSeekCloser, error) {
	if len(sum) != sha256.Size*2 {
		return nil, ErrNotFound
	}
	r, err := s.bucket.NewReader(ctx, contentKey(sum), nil)
	if err != nil {
		return nil, notFound(err)
	}
	return r, nil
}

func (s *Store) read(ctx context.Context, key string) ([]byte, error) {
	b, err := s.bucket.ReadAll(ctx, key)
	return b, notFound(err)
}

func notFound(err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		return ErrNotFound
	}
	return err
}

func uploadKey(name string) string { return "uploads/" + name }

// PutUpload streams an upload's bytes under name, at most limit bytes:
// more fails with ErrTooLarge and keeps nothing. It returns the size.
func (s *Store) PutUpload(ctx context.Context, name string, r io.Reader, limit int64) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.bucket.NewWriter(ctx, uploadKey(name), &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(w, io.LimitReader(r, limit+1))
	if err == nil && n > limit {
		err = ErrTooLarge
	}
	if err != nil {
		cancel() // a cancelled writer discards what it wrote
		_ = w.Close()
		return 0, err
	}
	return n, w.Close()
}

// ErrTooLarge says an upload was larger than its limit.
var ErrTooLarge = errors.New("upload too large")

// OpenUpload returns a reader of the upload bytes stored under name.
func (s *Store) OpenUpload(ctx context.Context, name string) (io.ReadCloser, error) {
	r, err := s.bucket.NewReader(ctx, uploadKey(name), nil)
	return r, notFound(err)
}

// DeleteUpload removes the upload bytes under name; missing ones are not
// an error.
func (s *Store) DeleteUpload(ctx context.Context, name string) error {
	if err := notFound(s.bucket.Delete(ctx, uploadKey(name))); err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	return nil
}
