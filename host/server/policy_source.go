package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/host/signing"
	"github.com/ctxgate/ctxgate/internal/safefile"
	"github.com/ctxgate/ctxgate/policies"
)

// PolicySource says where the policy comes from. Load is called at start and
// on every reload, so edits to the files it names take effect without a
// restart.
type PolicySource struct {
	// Path is a policy JSON file, a signed bundle, or a preset name
	// (policies.Names()). Empty: the built-in default, or the
	// sufficient-context preset when SufficientContext is on.
	Path string
	// TrustFiles are trust files (ctxgate keygen's PREFIX.pub). When set,
	// only a bundle signed by these keys is loaded, at start and on reload.
	TrustFiles []string
	// TrustMode is the signatures a bundle needs (host.Options.TrustMode):
	// hybrid by default; Ed25519Only or MLDSA65Only for single-scheme keys.
	TrustMode bundle.Mode
	// SufficientContext overrides parts of the policy (the sufficient-context gateway's config).
	SufficientContext *SufficientContext
}

// loaded is what Load produced: the bytes the gate gets and the files whose
// change triggers a reload.
type loaded struct {
	policy []byte // the policy JSON or bundle handed to the gate; nil: default
	trust  []byte // trust keys JSON, nil when none
	files  []string
	source string // for /v1/policy and logs
}

// digest is the sha256 of the policy and the trust keys: "did anything
// change?"
func (l *loaded) digest() [32]byte {
	h := sha256.New()
	h.Write(l.policy)
	h.Write([]byte{0})
	h.Write(l.trust)
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d
}

// Load reads the policy (and trust keys) and applies the sufficient_context
// overrides. It does not validate the policy: the gate does, when a new
// host.Gate is built from these bytes.
func (ps *PolicySource) Load() (*loaded, error) {
	l := &loaded{source: "built-in default"}
	sc := ps.SufficientContext
	if ps.Path == "" && len(ps.TrustFiles) > 0 {
		// The built-in default (and the sufficient-context preset) is not
		// signed: with trust keys there is nothing it could be verified by.
		return nil, errors.New("policy: trust keys are configured but no policy is given: " +
			"a signed bundle is required (the built-in default is not signed)")
	}
	switch {
	case ps.Path != "":
		b, err := safefile.Read(ps.Path, safefile.MaxPolicyBytes)
		var refused *safefile.Error
		switch {
		case err == nil && len(bytes.TrimSpace(b)) == 0:
			// Never the built-in default: an empty file is a policy being
			// written (truncated, then filled) or a mount not there yet.
			return nil, emptyPolicyError{ps.Path}
		case err == nil:
			l.policy, l.source, l.files = b, ps.Path, append(l.files, ps.Path)
		case errors.As(err, &refused):
			// A FIFO, a device, a directory or a file over the limit is
			// never a policy being written: the error is final (reload.go).
			return nil, fmt.Errorf("policy %w", err)
		case errors.Is(err, fs.ErrNotExist):
			p, ok := policies.Get(ps.Path)
			if !ok {
				return nil, errors.New("policy " + strconv.Quote(ps.Path) + ": no such file, and not a preset name (presets: " +
					strings.Join(policies.Names(), ", ") + "; ctxgate policies describes them)")
			}
			l.policy, l.source = p, "preset "+ps.Path
		default:
			return nil, errors.New("policy: " + err.Error())
		}
	case sc.On():
		p, _ := policies.Get("sufficient-context")
		l.policy, l.source = p, "preset sufficient-context"
	}
	if len(ps.TrustFiles) > 0 {
		keys, err := signing.ReadTrust(ps.TrustFiles...)
		if err != nil {
			return nil, fmt.Errorf("trust: %w", err)
		}
		l.trust = signing.MarshalPublicKeys(keys)
		l.files = append(l.files, ps.TrustFiles...)
	}
	if sc.On() && sc.overrides() {
		if l.trust != nil || bundle.IsBundle(l.policy) {
			return nil, errors.New("sufficient_context: min_contexts, thresholds and decline_insufficient cannot be applied to a signed policy " +
				"(the signature covers the policy): set them in the policy before signing")
		}
		p, err := applySufficientContext(l.policy, sc)
		if err != nil {
			return nil, err
		}
		l.policy = p
		l.source += " + sufficient_context"
	}
	return l, nil
}

// emptyPolicyError is a policy file with nothing (or only white space) in
// it. A reload retries it for a while: a file overwritten in place is empty
// for a moment.
type emptyPolicyError struct{ path string }

func (e emptyPolicyError) Error() string {
	return "policy " + strconv.Quote(e.path) + " is empty (a file being written?); the built-in default is never used in place of a policy file"
}

// describe names the source for a log line, without reading it.
func (ps *PolicySource) describe() string {
	switch {
	case ps.Path != "":
		return ps.Path
	case ps.SufficientContext.On():
		return "preset sufficient-context"
	}
	return "built-in default"
}

// files are the paths Load reads, whether or not they exist now.
func (ps *PolicySource) files() []string {
	var f []string
	if _, preset := policies.Get(ps.Path); ps.Path != "" && !preset {
		f = append(f, ps.Path)
	}
	return append(f, ps.TrustFiles...)
}

func (sc *SufficientContext) overrides() bool {
	return sc.MinContexts != nil || sc.Thresholds.Sufficient != nil || sc.Thresholds.Partial != nil || sc.DeclineInsufficient != nil
}

// applySufficientContext rewrites the policy document:
//   - min_contexts -> signals.sufficiency.min_contexts;
//   - thresholds.sufficient / .partial -> min of the first band whose level is
//     sufficient / partial;
//   - decline_insufficient false -> bands of level insufficient that refuse
//     caveat instead, and a refusing no_chunks outcome falls back (there is
//     nothing to caveat); true -> insufficient bands and no_chunks refuse.
//
// The result is checked by the gate like any policy (bands must stay
// descending, and so on); its sha256 differs from the file's, as it should.
func applySufficientContext(policy []byte, sc *SufficientContext) ([]byte, error) {
	if len(policy) == 0 {
		policy = policies.Default()
	}
	dec := json.NewDecoder(bytes.NewReader(policy))
	dec.UseNumber() // keep numbers as written, so only the overridden ones change
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, errors.New("sufficient_context: the policy is not a JSON object: " + err.Error())
	}
	if sc.MinContexts != nil {
		sigs, _ := doc["signals"].(map[string]any)
		suff, ok := sigs["sufficiency"].(map[string]any)
		if !ok {
			if _, present := sigs["sufficiency"]; !present {
				return nil, errors.New("sufficient_context.min_contexts: the policy computes no sufficiency signal (signals.sufficiency)")
			}
			suff = map[string]any{}
			sigs["sufficiency"] = suff
		}
		suff["min_contexts"] = *sc.MinContexts
	}
	bands, _ := doc["bands"].([]any)
	setMin := func(level string, v *float64) error {
		if v == nil {
			return nil
		}
		for _, b := range bands {
			if m, ok := b.(map[string]any); ok && m["level"] == level {
				m["min"] = *v
				return nil
			}
		}
		return errors.New("sufficient_context.thresholds." + level + ": the policy has no band of level " + level)
	}
	if err := setMin("sufficient", sc.Thresholds.Sufficient); err != nil {
		return nil, err
	}
	if err := setMin("partial", sc.Thresholds.Partial); err != nil {
		return nil, err
	}
	if d := sc.DeclineInsufficient; d != nil {
		nc, _ := doc["no_chunks"].(map[string]any)
		if nc == nil {
			nc = map[string]any{}
			doc["no_chunks"] = nc
		}
		noChunks, _ := nc["action"].(string) // absent: the gate's default, refuse
		if *d {
			nc["action"] = "refuse"
		} else if noChunks == "" || noChunks == "refuse" {
			nc["action"] = "fallback"
		}
		for _, b := range bands {
			m, ok := b.(map[string]any)
			if !ok || m["level"] != "insufficient" {
				continue
			}
			if *d {
				m["action"] = "refuse"
			} else if m["action"] == "refuse" {
				m["action"] = "caveat"
			}
		}
	}
	return json.Marshal(doc)
}
