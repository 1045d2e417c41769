package bundle

import (
	"bufio"
	"encoding/binary"
	"io"
)

// Record layouts of the ZIP format (APPNOTE.TXT 4.3), as much of them as
// counting the central directory needs.
const (
	directoryEndSignature   = 0x06054b50
	directoryEndLen         = 22
	directory64LocSignature = 0x07064b50
	directory64LocLen       = 20
	directory64EndSignature = 0x06064b50
	directory64EndLen       = 56
	directoryHeaderSig      = 0x02014b50
	directoryHeaderLen      = 46
)

// countEntries counts the records of r's central directory, stopping once it
// passes limit, and allocates nothing per record. It finds the directory the
// way archive/zip does, and counts the way archive/zip reads: headers one
// after another until one is not a header. The count in the directory's end
// record cannot be used, since archive/zip checks only its low 16 bits.
//
// Anything it cannot make sense of counts 0 and is left to archive/zip to
// refuse. The count is a guard on memory, not a parse: ReadZip checks the
// entries archive/zip found against the limit again.
func countEntries(r io.ReaderAt, size int64, limit int) int {
	le := binary.LittleEndian
	var end []byte
	endOffset := int64(-1)
	for _, n := range []int64{1024, 65 * 1024} {
		n = min(n, size)
		block := make([]byte, n)
		if _, err := r.ReadAt(block, size-n); err != nil && err != io.EOF {
			return 0
		}
		if p := findDirectoryEnd(block); p >= 0 {
			end, endOffset = block[p:], size-n+int64(p)
			break
		}
		if n == size {
			return 0
		}
	}
	if endOffset < 0 {
		return 0
	}
	records := uint64(le.Uint16(end[10:]))
	dirSize := uint64(le.Uint32(end[12:]))
	dirOffset := uint64(le.Uint32(end[16:]))
	if records == 0xffff || dirSize == 0xffff || dirOffset == 0xffffffff {
		if endOffset >= directory64LocLen {
			loc := make([]byte, directory64LocLen)
			if _, err := r.ReadAt(loc, endOffset-directory64LocLen); err != nil {
				return 0
			}
			if le.Uint32(loc) == directory64LocSignature && le.Uint32(loc[4:]) == 0 && le.Uint32(loc[16:]) == 1 {
				p := int64(le.Uint64(loc[8:]))
				end64 := make([]byte, directory64EndLen)
				if _, err := r.ReadAt(end64, p); err != nil || le.Uint32(end64) != directory64EndSignature {
					return 0
				}
				endOffset = p
				dirSize, dirOffset = le.Uint64(end64[40:]), le.Uint64(end64[48:])
			}
		}
	}
	if dirSize > 1<<63-1 || dirOffset > 1<<63-1 {
		return 0
	}
	// Data before the archive (a self-extractor's program) shifts every
	// offset; archive/zip finds by how much from where the directory ends,
	// unless a header sits at the offset as written.
	base := endOffset - int64(dirSize) - int64(dirOffset)
	if start := base + int64(dirOffset); start < 0 || start >= size {
		return 0
	}
	if base > 0 && isDirectoryHeader(r, int64(dirOffset)) {
		base = 0
	}
	start := base + int64(dirOffset)

	br := bufio.NewReader(io.NewSectionReader(r, start, size-start))
	var h [directoryHeaderLen]byte
	n := 0
	for n <= limit {
		if _, err := io.ReadFull(br, h[:]); err != nil || le.Uint32(h[:]) != directoryHeaderSig {
			break
		}
		rest := int(le.Uint16(h[28:])) + int(le.Uint16(h[30:])) + int(le.Uint16(h[32:]))
		if _, err := br.Discard(rest); err != nil {
			break
		}
		n++
	}
	return n
}

// findDirectoryEnd returns where the end of central directory record starts
// in b, the last bytes of the file, or -1: the last signature whose comment
// fits, as archive/zip looks for it.
func findDirectoryEnd(b []byte) int {
	for i := len(b) - directoryEndLen; i >= 0; i-- {
		if binary.LittleEndian.Uint32(b[i:]) == directoryEndSignature {
			if commentLen := int(binary.LittleEndian.Uint16(b[i+directoryEndLen-2:])); i+directoryEndLen+commentLen > len(b) {
				return -1
			}
			return i
		}
	}
	return -1
}

func isDirectoryHeader(r io.ReaderAt, off int64) bool {
	var h [4]byte
	_, err := r.ReadAt(h[:], off)
	return err == nil && binary.LittleEndian.Uint32(h[:]) == directoryHeaderSig
}
