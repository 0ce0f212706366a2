package seglog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Spare segments. DeleteThrough keeps up to Config.Spares deleted segments as spare files
// instead of removing them, and a roll renames a spare into place instead of creating a new
// file, as PostgreSQL recycles its WAL segments. A spare's blocks are allocated and written, so
// appending into it (overwriting stale records) lets fdatasync flush data only, with no journal
// commit; and the roll costs a 16-byte header write, an fdatasync and a rename. A zero-filled
// new segment stalled the writer 80-110 ms a roll at 1,000-record requests
// (scripts/bench-bulk.sh); BenchmarkAppend's pruned rows measure both (docs/design/seglog.md).
//
// Stale records in a recycled file are never read as valid: a record's id is covered by its
// checksum, ids are never reused, and every id in a recycled file is below the first id of the
// segment it becomes, so recovery and readers, which expect consecutive ids from the segment's
// first, stop at the first stale record (recover.go scrubs what follows it).
//
// Spares count in Stats.DiskBytes (and so in a size bound computed from it); ReleaseSpares gives
// them back to the filesystem under disk pressure, and a write that fails for lack of space
// releases them too.

// spare is one spare segment file.
type spare struct {
	path string
	size int64
}

// spareSuffix names spare files: "<the first id they held>.spare", never read as segments.
const spareSuffix = ".spare"

// maxSpares is the configured bound on spare files (Config.Spares: negative keeps none).
func (c Config) maxSpares() int { return max(c.Spares, 0) }

// listSpares finds the spare files Open left in the directory, keeps up to the configured
// number and removes the rest. It is called by recover before any segment is created.
func (l *Log) listSpares(ents []os.DirEntry) error {
	var extra []string
	for _, e := range ents {
		if filepath.Ext(e.Name()) != spareSuffix || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(l.cfg.Dir, e.Name())
		if len(l.spares) >= l.cfg.maxSpares() {
			extra = append(extra, path)
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return fmt.Errorf("seglog: stat spare segment: %w", err)
		}
		l.spares = append(l.spares, spare{path: path, size: fi.Size()})
	}
	return removeFiles(l.cfg, extra)
}

// takeSpare makes a spare the segment whose first id is first: it writes the file header
// (and zero-fills up to Config.SegmentBytes if the file is shorter), fdatasyncs the file, then
// renames it into place and fsyncs the directory, so a crash leaves either a spare or a whole
// segment with its header. It returns a nil segment when there is no spare.
func (l *Log) takeSpare(first int64) (*segment, *os.File, error) {
	l.mu.Lock()
	if len(l.spares) == 0 {
		l.mu.Unlock()
		return nil, nil, nil
	}
	sp := l.spares[len(l.spares)-1]
	l.spares = l.spares[:len(l.spares)-1]
	l.mu.Unlock()
	path := filepath.Join(l.cfg.Dir, segmentName(first))
	f, err := os.OpenFile(sp.path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, classify("open spare segment", err)
	}
	var hdr [fileHeaderSize]byte
	putFileHeader(hdr[:], first)
	_, err = f.WriteAt(hdr[:], 0)
	size := max(sp.size, fileHeaderSize)
	if err == nil && !l.cfg.growing && size < l.cfg.SegmentBytes { // a segment sealed short
		err = zeroFill(f, size, l.cfg.SegmentBytes)
		size = l.cfg.SegmentBytes
	}
	if err == nil && l.cfg.Sync != SyncOff {
		err = fdatasync(f)
	}
	if err == nil {
		err = os.Rename(sp.path, path)
	}
	if err == nil && l.cfg.Sync != SyncOff {
		err = syncDir(l.cfg.Dir)
	}
	if err != nil {
		f.Close()
		os.Remove(sp.path) // a spare that cannot be prepared is not worth keeping
		return nil, nil, classify("recycle spare segment "+sp.path, err)
	}
	return &segment{first: first, path: path, end: fileHeaderSize, last: first - 1, size: size, zeroed: fileHeaderSize, recycled: true}, f, nil
}

// recycle turns the deleted segment s into a spare if there is room for one, and reports
// whether it did; else the caller removes the file.
func (l *Log) recycle(s *segment) (bool, error) {
	l.mu.Lock()
	room := len(l.spares) < l.cfg.maxSpares()
	l.mu.Unlock()
	if !room {
		return false, nil
	}
	path := filepath.Join(l.cfg.Dir, fmt.Sprintf("%020d%s", s.first, spareSuffix))
	if err := os.Rename(s.path, path); err != nil {
		return false, fmt.Errorf("seglog: keep segment as a spare: %w", err)
	}
	l.mu.Lock()
	l.spares = append(l.spares, spare{path: path, size: s.size})
	l.mu.Unlock()
	return true, nil
}

// ReleaseSpares removes the spare segment files and returns the bytes it gave back to the
// filesystem. A caller keeping the data directory under a size bound calls it when the
// directory is over the bound: spares are room kept for the log's next segments, which the
// rest of the directory may need more. Safe to call from any goroutine.
func (l *Log) ReleaseSpares() (freed int64, err error) {
	l.mu.Lock()
	spares := slices.Clone(l.spares)
	l.spares = l.spares[:0]
	l.mu.Unlock()
	paths := make([]string, len(spares))
	for i, sp := range spares {
		paths[i] = sp.path
		freed += sp.size
	}
	if err := removeFiles(l.cfg, paths); err != nil {
		return freed, err
	}
	return freed, nil
}

// spareBytes returns the spares' count and their bytes on disk. Called with mu held.
func (l *Log) spareBytes() (n int, bytes int64) {
	for _, sp := range l.spares {
		bytes += sp.size
	}
	return len(l.spares), bytes
}

// removeFiles removes paths and, if it removed any, fsyncs the directory (below SyncOff).
func removeFiles(cfg Config, paths []string) error {
	var errs []error
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("seglog: remove %s: %w", p, err))
		}
	}
	if len(paths) > 0 && cfg.Sync != SyncOff {
		if err := syncDir(cfg.Dir); err != nil {
			errs = append(errs, fmt.Errorf("seglog: sync dir after removing files: %w", err))
		}
	}
	return errors.Join(errs...)
}
