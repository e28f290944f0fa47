package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/internal/safefile"
)

// policyState is the highest signed policy version this server (or an
// earlier run of it on the same policy path) has loaded, kept in a file so
// that a restart does not forget it: without it, a crash forced by whoever
// can write the policy path would bring back any older signed bundle put
// there. Only kept with trust keys (an unsigned policy may go back in
// version: whoever can write it can write anything).
//
// The file is StateDir/<policy file name>.ctxgate-state.json (StateDir
// defaults to the policy file's directory), one JSON object:
//
//	{"policy_path":"/etc/ctxgate/policy.bundle.json","name":"default","version":"5",
//	 "sha256":"…","updated":"2026-11-28T02:04:00Z"}
//
// written atomically (a temporary file in the same directory, fsync,
// rename, fsync of the directory). Removing it is how an operator rolls
// back deliberately (docs/server.md, "Rollback").
type policyState struct {
	path    string       // the state file
	highest *stateRecord // nil: none recorded yet
}

type stateRecord struct {
	PolicyPath string    `json:"policy_path"`
	Name       string    `json:"name"`
	Version    string    `json:"version"`
	SHA256     string    `json:"sha256"`
	Updated    time.Time `json:"updated"`
}

// stateFileSuffix names a policy's state file: policy.bundle.json ->
// policy.bundle.json.ctxgate-state.json.
const stateFileSuffix = ".ctxgate-state.json"

// maxStateBytes bounds the state file as read: a record is a few hundred
// bytes.
const maxStateBytes = 64 << 10

// statePath is where the state of the policy at policyPath is kept.
func statePath(stateDir, policyPath string) string {
	if stateDir == "" {
		stateDir = filepath.Dir(policyPath)
	}
	return filepath.Join(stateDir, filepath.Base(policyPath)+stateFileSuffix)
}

// openPolicyState reads the state file; a missing one is an empty state (a
// first start). A state file that does not read is an error: starting as if
// it were missing would drop the floor it holds.
func openPolicyState(path string) (*policyState, error) {
	st := &policyState{path: path}
	b, err := safefile.Read(path, maxStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, stateError(path, err.Error())
	}
	var rec stateRecord
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return nil, stateError(path, "not a state record: "+err.Error())
	}
	if rec.Version == "" {
		return nil, stateError(path, "no version")
	}
	st.highest = &rec
	return st, nil
}

func stateError(path, msg string) error {
	return errors.New("policy state " + strconv.Quote(path) + ": " + msg +
		" (remove the file to start without the rollback floor it holds; docs/server.md, Rollback)")
}

// version is the highest version recorded, "" when none.
func (st *policyState) version() string {
	if st == nil || st.highest == nil {
		return ""
	}
	return st.highest.Version
}

// raise records ref when its version is above the one recorded (or none
// is): the file is rewritten only when the floor moves, except that force
// writes it anyway (at start, so an unwritable state directory is found
// then rather than at the first newer policy).
func (st *policyState) raise(policyPath string, ref policyRef, force bool) error {
	if ref.Version == "" {
		return nil
	}
	higher := st.highest == nil || bundle.CompareVersions(ref.Version, st.highest.Version) > 0
	if !higher && !force {
		return nil
	}
	rec := st.highest
	if higher {
		rec = &stateRecord{PolicyPath: policyPath, Name: ref.Name, Version: ref.Version, SHA256: ref.SHA256}
	}
	rec.Updated = time.Now().UTC().Truncate(time.Second)
	b, _ := json.Marshal(rec)
	if err := writeFileAtomic(st.path, append(b, '\n')); err != nil {
		return errors.New("policy state: cannot write " + strconv.Quote(st.path) + ": " + err.Error() +
			" (state_dir, --state-dir: a directory only ctxgate serve can write)")
	}
	st.highest = rec
	return nil
}

// writeFileAtomic replaces path with data: a reader (or a crash) sees the
// old file or the new one, never a part.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	// The rename is durable once the directory is synced.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// openState reads the policy state when trust keys are set (and logs the
// floor it holds).
func (s *Server) openState() error {
	ps := &s.opts.Policy
	if len(ps.TrustFiles) == 0 || ps.Path == "" {
		return nil
	}
	st, err := openPolicyState(statePath(s.opts.StateDir, ps.Path))
	if err != nil {
		return err
	}
	s.state = st
	s.log.Info("policy state: signed versions older than the highest loaded are refused", "state", st.path, "highest", st.version(), "min_version", s.opts.MinVersion)
	return nil
}

// recordStarted writes the state of the policy New loaded, even when its
// version is the one recorded: a state directory that cannot be written
// fails the start, not the first newer policy. Later loads raise it in
// swap.
func (s *Server) recordStarted() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	s.started = true
	if a := s.cur.Load(); s.state != nil && a != nil {
		return s.state.raise(s.opts.Policy.Path, a.ref, true)
	}
	return nil
}

// raiseState records a newly swapped-in policy's version. A failure keeps
// the policy (it is verified) but is logged and counted: the floor it
// would have set is lost at the next restart.
func (s *Server) raiseState(a *active) {
	if s.state == nil || !s.started {
		return
	}
	if err := s.state.raise(s.opts.Policy.Path, a.ref, false); err != nil {
		s.metrics.policyStateErrors.Inc()
		s.log.Error("policy state not written: a restart will not know this version was loaded", "policy", a.ref.label(), "error", err.Error())
	}
}
