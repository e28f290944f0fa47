package host

import (
	"errors"
	"log/slog"
	"os"
	"sync"

	"github.com/tetratelabs/wazero"
)

// sharedCache is the in-memory compilation cache every Gate without a
// usable CacheDir uses, so a second Gate in the same process (tests, a
// policy reload) does not compile the module again.
var sharedCache = sync.OnceValue(wazero.NewCompilationCache)

// warnedDirs holds the cache directories already reported unusable, so a
// process says so once (a server makes a Gate per policy load and lane).
var warnedDirs sync.Map

// compilationCache opens dir as a directory cache. A directory that cannot
// be created or written (a read-only root file system, an unwritable HOME)
// is not fatal: compiling is only slower, so the module compiles in memory
// and log gets one warning line for that directory.
func compilationCache(dir string, log *slog.Logger) wazero.CompilationCache {
	if dir == "" {
		return sharedCache()
	}
	err := writableDir(dir)
	var cache wazero.CompilationCache
	if err == nil {
		// wazero creates its own subdirectory in dir, and fails a compile
		// whose result it cannot store, hence the probe above.
		cache, err = wazero.NewCompilationCacheWithDir(dir)
	}
	if err == nil {
		return cache
	}
	if _, seen := warnedDirs.LoadOrStore(dir, true); !seen {
		if log == nil {
			log = slog.Default()
		}
		log.Warn("ctxgate: compilation cache directory is not writable; compiling in memory", "dir", dir, "error", err.Error())
	}
	return sharedCache()
}

// writableDir makes dir if needed and checks that a file can be created in it.
func writableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".ctxgate-probe-*")
	if err != nil {
		return err
	}
	return errors.Join(f.Close(), os.Remove(f.Name()))
}
