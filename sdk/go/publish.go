package assent

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// InlineLimit is the most content, in bytes, a publish sends in its JSON
// body (which takes 2 MB of files at most); more goes through an upload
// ticket.
const InlineLimit = 1_500_000

// ReportSource is what a report or a version is published from: made by
// FromContent, FromFiles or FromPath.
type ReportSource struct {
	kind    int
	content string
	files   map[string][]byte
	path    string
}

const (
	sourceContent = iota + 1
	sourceFiles
	sourcePath
)

// FromContent publishes one HTML document.
func FromContent(html string) ReportSource { return ReportSource{kind: sourceContent, content: html} }

// FromFiles publishes files by path (index.html among them): inline when
// they are text and small, else zipped and uploaded.
func FromFiles(files map[string][]byte) ReportSource {
	return ReportSource{kind: sourceFiles, files: files}
}

// FromPath publishes a file or folder on disk: an HTML file, a ZIP (by
// its .zip name) or a folder holding index.html, zipped.
func FromPath(path string) ReportSource { return ReportSource{kind: sourcePath, path: path} }

// content is the content fields of a publish: Content or Files inline
// when small, else UploadID after uploading through a ticket.
func (s *ReportsService) content(ctx context.Context, src ReportSource) (content *string, files []InlineFile, uploadID *string, err error) {
	upload := func(data []byte, ctype string) error {
		u, err := s.Upload(ctx, data, ctype)
		if err == nil {
			uploadID = &u.UploadID
		}
		return err
	}
	switch src.kind {
	case sourceContent:
		if len(src.content) <= InlineLimit {
			return &src.content, nil, nil, nil
		}
		return nil, nil, uploadID, upload([]byte(src.content), "text/html")
	case sourceFiles:
		if len(src.files) == 0 {
			return nil, nil, nil, errors.New("assent: FromFiles needs at least one file")
		}
		total, text := 0, true
		for _, data := range src.files {
			total += len(data)
			text = text && utf8.Valid(data)
		}
		if text && total <= InlineLimit {
			for _, p := range sortedKeys(src.files) {
				files = append(files, InlineFile{Path: p, Content: string(src.files[p])})
			}
			return nil, files, nil, nil
		}
		data, err := zipFiles(src.files)
		if err != nil {
			return nil, nil, nil, err
		}
		return nil, nil, uploadID, upload(data, "application/zip")
	case sourcePath:
		data, ctype, err := readPath(src.path)
		if err != nil {
			return nil, nil, nil, err
		}
		if ctype == "text/html" && len(data) <= InlineLimit && utf8.Valid(data) {
			c := string(data)
			return &c, nil, nil, nil
		}
		return nil, nil, uploadID, upload(data, ctype)
	}
	return nil, nil, nil, errors.New("assent: a ReportSource comes from FromContent, FromFiles or FromPath")
}

// CreateFrom publishes a new report from src; body holds the rest
// (Title, Slug, Audience, …) and must leave Content, Files and UploadID
// empty. Large content goes through an upload ticket by itself. With
// WithIdempotencyKey, a repeat that uploads again sends another uploadId,
// which the server refuses as idempotency_key_reused.
func (s *ReportsService) CreateFrom(ctx context.Context, body *ReportCreate, src ReportSource, opts ...CallOption) (*Report, error) {
	if body == nil {
		return nil, errors.New("assent: CreateFrom needs a body with a Title")
	}
	if body.Content != nil || body.Files != nil || body.UploadID != nil {
		return nil, errors.New("assent: CreateFrom sets Content, Files and UploadID from src; leave them empty")
	}
	b := *body
	var err error
	if b.Content, b.Files, b.UploadID, err = s.content(ctx, src); err != nil {
		return nil, err
	}
	return s.Create(ctx, &b, opts...)
}

// PublishFrom publishes a new version of the report (id or slug) from
// src; body (nil allowed) holds ExpectedVersion and ChangeSummary. With
// ExpectedVersion the server refuses with version_conflict unless it is
// still the report's latest version.
func (s *ReportsService) PublishFrom(ctx context.Context, idOrSlug string, src ReportSource, body *VersionCreate, opts ...CallOption) (*Report, error) {
	var b VersionCreate
	if body != nil {
		if body.Content != nil || body.Files != nil || body.UploadID != nil {
			return nil, errors.New("assent: PublishFrom sets Content, Files and UploadID from src; leave them empty")
		}
		b = *body
	}
	var err error
	if b.Content, b.Files, b.UploadID, err = s.content(ctx, src); err != nil {
		return nil, err
	}
	return s.Publish(ctx, idOrSlug, &b, opts...)
}

// Upload takes an upload ticket and PUTs data (one HTML file, text/html,
// or one ZIP, application/zip; at most 100 MB) to its URL, without the
// key: the URL is the credential. Publish with the ticket's UploadID.
func (s *ReportsService) Upload(ctx context.Context, data []byte, contentType string, opts ...CallOption) (*Upload, error) {
	ticket, err := s.CreateUpload(ctx, opts...)
	if err != nil {
		return nil, err
	}
	if _, err := s.PutUpload(ctx, ticket, data, WithContentType(contentType)); err != nil {
		return nil, err
	}
	return ticket, nil
}

// readPath reads a file or folder as one upload: an HTML file as it is, a
// ZIP as it is, a folder zipped (it must hold index.html).
func readPath(path string) ([]byte, string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, "", err
	}
	if !info.IsDir() {
		data, err := os.ReadFile(path)
		if strings.HasSuffix(strings.ToLower(path), ".zip") {
			return data, "application/zip", err
		}
		return data, "text/html", err
	}
	files := map[string][]byte{}
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(path, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		return nil, "", err
	}
	if _, ok := files["index.html"]; !ok {
		return nil, "", fmt.Errorf("assent: %s holds no index.html", path)
	}
	data, err := zipFiles(files)
	return data, "application/zip", err
}

func zipFiles(files map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, p := range sortedKeys(files) {
		w, err := z.Create(p)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(files[p]); err != nil {
			return nil, err
		}
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
