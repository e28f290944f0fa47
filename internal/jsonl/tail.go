package jsonl

import (
	"bytes"
	"io"
)

// TornFile is what CutTorn needs of a log file opened for appending and
// reading (*os.File).
type TornFile interface {
	io.ReaderAt
	Truncate(size int64) error
}

// CutTorn truncates a JSON-lines file of size bytes back to its last
// newline, so that the next line appended starts a line of its own and the
// fragment a writer left when it died mid-line is gone, not left in the
// middle of the file. It returns the bytes cut (0 when the file ends with a
// newline or is empty); a file with no newline at all is emptied. It reads
// backwards from the end in blocks, so a long fragment costs one block of
// memory.
func CutTorn(f TornFile, size int64) (int64, error) {
	const block = 64 << 10
	var buf [block]byte
	for end := size; end > 0; {
		start := max(end-block, 0)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
			return 0, err
		}
		if end == size && b[len(b)-1] == '\n' {
			return 0, nil
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			keep := start + int64(i) + 1
			return size - keep, f.Truncate(keep)
		}
		end = start
	}
	if size == 0 {
		return 0, nil
	}
	return size, f.Truncate(0)
}
