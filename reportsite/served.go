package reportsite

import (
	"cmp"
	"errors"
	"io"
)

// served is what a file's response sends, as http.ServeContent reads it:
// the stored file with tag inserted at at (a page's selection script tag;
// none for other files). It reads and seeks the blob, never holding the
// file, so ranges and large files cost a buffer, not their size. The blob
// is opened, and the tag's place found, only when a byte is read (prepare):
// HEAD and 304 never open it.
type served struct {
	// prepareFn opens the blob and says where tag goes.
	prepareFn func() (io.ReadSeekCloser, int64, error)
	blob      io.ReadSeekCloser
	tag       string
	at        int64
	size      int64 // of what is sent: the file and the tag
	pos       int64
	blobPos   int64
	// err is the first failure to read the file, which ServeContent
	// does not report.
	err error
}

func newServed(fileSize int64, tag string, prepare func() (io.ReadSeekCloser, int64, error)) *served {
	return &served{prepareFn: prepare, tag: tag, size: fileSize + int64(len(tag))}
}

// prepare opens the blob once.
func (s *served) prepare() error {
	if s.blob != nil {
		return nil
	}
	blob, at, err := s.prepareFn()
	if err != nil {
		return err
	}
	if at < 0 || at > s.size-int64(len(s.tag)) {
		_ = blob.Close()
		return errors.New("reportsite: the tag's place is outside the file")
	}
	s.blob, s.at, s.blobPos = blob, at, -1
	return nil
}

func (s *served) Read(p []byte) (int, error) {
	if s.pos >= s.size {
		return 0, io.EOF
	}
	if err := s.prepare(); err != nil {
		s.err = cmp.Or(s.err, err)
		return 0, err
	}
	tagEnd := s.at + int64(len(s.tag))
	switch {
	case s.pos < s.at:
		return s.readBlob(p[:min(int64(len(p)), s.at-s.pos)], s.pos)
	case s.pos < tagEnd:
		n := copy(p, s.tag[s.pos-s.at:])
		s.pos += int64(n)
		return n, nil
	default:
		return s.readBlob(p[:min(int64(len(p)), s.size-s.pos)], s.pos-int64(len(s.tag)))
	}
}

// readBlob reads the file at off into p.
func (s *served) readBlob(p []byte, off int64) (int, error) {
	if off != s.blobPos {
		if _, err := s.blob.Seek(off, io.SeekStart); err != nil {
			s.err = cmp.Or(s.err, err)
			return 0, err
		}
		s.blobPos = off
	}
	n, err := s.blob.Read(p)
	s.pos += int64(n)
	s.blobPos += int64(n)
	if errors.Is(err, io.EOF) && s.pos < s.size {
		// The tag, or the rest of the file, is still to come; a file
		// shorter than its manifest says is cut off.
		if n > 0 {
			return n, nil
		}
		err = io.ErrUnexpectedEOF
	}
	if err != nil && !errors.Is(err, io.EOF) {
		s.err = cmp.Or(s.err, err)
	}
	return n, err
}

func (s *served) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += s.pos
	case io.SeekEnd:
		offset += s.size
	default:
		return 0, errors.New("reportsite: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("reportsite: seek before the start")
	}
	s.pos = offset
	return offset, nil
}

// Close closes the blob, if it was opened.
func (s *served) Close() error {
	if s.blob == nil {
		return nil
	}
	return s.blob.Close()
}
