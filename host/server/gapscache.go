package server

import (
	"os"
	"sync"
)

// gapsPageCacheEntries bounds the pages kept: one per query (min_count,
// floor, low_confidence) asked since the gap log last changed.
const gapsPageCacheEntries = 8

// gapsPages keeps the /gaps pages built from the gap log for as long as it
// is the same file, unchanged: the same device and inode (a rotation or
// logrotate's rename makes a new one), size and modification time. A page
// is a pure function of the log's bytes and the query, and building one
// reads up to 16 MiB and clusters it (about a second of CPU on a 17 MB
// log), so a reload of an unchanged log costs one stat.
type gapsPages struct {
	mu    sync.Mutex
	file  os.FileInfo       // the log as the pages read it; nil: none kept
	pages map[string][]byte // by query key
}

// get is the page kept under key, if the log at path is still the file it
// was built from; nil otherwise.
func (c *gapsPages) get(path, key string) []byte {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !sameContent(c.file, fi) {
		return nil
	}
	return c.pages[key]
}

// put keeps page under key, built from the log as file describes it. Pages
// of an older file are dropped.
func (c *gapsPages) put(file os.FileInfo, key string, page []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !sameContent(c.file, file) || len(c.pages) >= gapsPageCacheEntries {
		c.file, c.pages = file, map[string][]byte{}
	}
	c.pages[key] = page
}

// sameContent reports whether a and b describe the same file with the same
// size and modification time.
func sameContent(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
