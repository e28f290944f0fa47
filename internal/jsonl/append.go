package jsonl

import "os"

// AppendLine appends one whole line (newline included) to the JSON-lines
// file at path and syncs it: the writer of a process that logs a line now
// and then (ctxgate eval --gap-log). Under an exclusive lock on the file
// (where the system has one), so concurrent appenders do not cut each
// other's lines, it first cuts a torn line a crash left at the end
// (CutTorn), and cuts its own line back off if the write comes up short (a
// full disk): whole or not at all.
func AppendLine(path string, line []byte) (err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer func() { // after unlock
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	unlock, err := lock(f)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	cut, err := CutTorn(f, size)
	if err != nil {
		return err
	}
	size -= cut
	n, err := f.Write(line)
	if err != nil {
		if n > 0 {
			f.Truncate(size)
		}
		return err
	}
	return f.Sync()
}
