package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"io"
	"os"
	"strings"

	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/host/signing"
	"github.com/ctxgate/ctxgate/internal/safefile"
)

// Signed policies and decision receipts (docs/signing.md).
func init() {
	register(command{name: "keygen", help: "make a signing key pair: PREFIX.key (secret) and PREFIX.pub (trust file)", run: runKeygen})
	register(command{name: "sign", help: "sign a policy into a bundle (hybrid Ed25519 + ML-DSA-65 by default)", run: runSign})
	register(command{name: "verify", help: "check a signed policy bundle against trust keys", run: runVerify})
	register(command{name: "verify-receipt", help: "check a signed decision receipt against trust keys", run: runVerifyReceipt})
}

// signFileList is a flag that may be given several times (--trust for
// rotation, --key for several key files).
type signFileList []string

func (r *signFileList) String() string     { return strings.Join(*r, ",") }
func (r *signFileList) Set(s string) error { *r = append(*r, s); return nil }

func signFlagSet(name, args string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		io.WriteString(stderr, "usage: ctxgate "+name+" "+args+"\n")
		fs.PrintDefaults()
	}
	return fs
}

// signUsage reports a command line missing what a command needs.
func signUsage(fs *flag.FlagSet) int {
	fs.Usage()
	return exitUsage
}

func runKeygen(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := signFlagSet("keygen", "--alg ed25519|ml-dsa-65|hybrid --out PREFIX", stderr)
	alg := fs.String("alg", "hybrid", "scheme: ed25519, ml-dsa-65 (alias ml-dsa), or hybrid (one key of each)")
	out := fs.String("out", "", "write PREFIX.key (secret, mode 0600) and PREFIX.pub (trust file); existing files are never overwritten")
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	if *out == "" || fs.NArg() != 0 {
		return signUsage(fs)
	}
	var algs []bundle.Alg
	switch *alg {
	case "hybrid":
		algs = signing.Algs
	case string(bundle.Ed25519), string(bundle.MLDSA65):
		algs = []bundle.Alg{bundle.Alg(*alg)}
	case "ml-dsa": // as --trust-mode spells it
		algs = []bundle.Alg{bundle.MLDSA65}
	default:
		io.WriteString(stderr, "ctxgate keygen: unknown --alg "+quote(*alg)+" (want ed25519, ml-dsa-65 or hybrid)\n")
		return exitUsage
	}
	var keys []*signing.PrivateKey
	var pubs []bundle.PublicKey
	for _, a := range algs {
		k, err := signing.GenerateKey(a, rand.Reader)
		if err != nil {
			return fail(stderr, "keygen", err)
		}
		keys = append(keys, k)
		pubs = append(pubs, k.Public())
	}
	// The public file first: if the secret one then fails, nothing secret
	// is left half-written.
	if err := signing.WriteKeyFile(*out+".pub", signing.MarshalPublicKeys(pubs), false); err != nil {
		return fail(stderr, "keygen", err)
	}
	if err := signing.WriteKeyFile(*out+".key", signing.MarshalPrivateKeys(keys), true); err != nil {
		os.Remove(*out + ".pub")
		return fail(stderr, "keygen", err)
	}
	for _, k := range keys {
		io.WriteString(stdout, string(k.Alg)+" "+k.ID+"\n")
	}
	io.WriteString(stdout, "wrote "+*out+".key (keep secret) and "+*out+".pub (copy to every node's --trust)\n")
	return exitOK
}

func runSign(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := signFlagSet("sign", "--key KEYFILE [--key KEYFILE2] POLICY.json > bundle.json", stderr)
	var keyFiles signFileList
	fs.Var(&keyFiles, "key", "secret key file (repeatable); every key in every file signs")
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	if len(keyFiles) == 0 || fs.NArg() != 1 {
		return signUsage(fs)
	}
	keys, err := signing.ReadPrivateKeys(keyFiles...)
	if err != nil {
		return fail(stderr, "sign", err)
	}
	policy, err := safefile.Read(fs.Arg(0), safefile.MaxPolicyBytes)
	if err != nil {
		return fail(stderr, "sign", err)
	}
	if bundle.IsBundle(policy) {
		return fail(stderr, "sign", signError(fs.Arg(0)+" is already a signed bundle"))
	}
	b, err := signing.Sign(policy, keys...)
	if err != nil {
		return fail(stderr, "sign", err)
	}
	stdout.Write(b)
	return exitOK
}

func runVerify(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := signFlagSet("verify", "--trust PUB [--trust PUB2] [--mode hybrid|ed25519|ml-dsa-65] [--min-version V] [--print] [--format json|text] BUNDLE.json", stderr)
	vf := addVerifyFlags(fs, "trust file of public keys (repeatable, for key rotation)",
		"signatures required: hybrid (Ed25519 and ML-DSA-65), ed25519 or ml-dsa-65 (alias ml-dsa)")
	minVersion := fs.String("min-version", "", "refuse a policy whose version sorts before this one")
	print := fs.Bool("print", false, "write the verified canonical policy to stdout instead of a summary")
	var of outputFormat
	of.register(fs)
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	in, code, ok := vf.load(fs, "verify", stderr)
	if !ok {
		return code
	}
	text, err := of.text(stdout)
	if err != nil {
		return fail(stderr, "verify", err)
	}
	policy, err := bundle.OpenWith(in.data, bundle.Options{Trust: in.trust, Mode: in.mode, MinVersion: *minVersion})
	if err != nil {
		return fail(stderr, "verify", signError(in.path+": "+err.Error()))
	}
	if *print {
		stdout.Write(policy)
		io.WriteString(stdout, "\n")
		return exitOK
	}
	b, _ := bundle.Parse(in.data) // cannot fail: Open parsed it
	sum := sha256.Sum256(policy)
	v := verifiedBundle{Verified: true, Path: in.path, Mode: in.mode.String(), Signatures: []signatureInfo{}}
	json.Unmarshal(policy, &v.Policy) // the verified canonical JSON: name and version are strings or absent
	v.Policy.SHA256 = hex.EncodeToString(sum[:])
	for _, s := range b.Signatures {
		v.Signatures = append(v.Signatures, signatureInfo{Alg: string(s.Alg), KeyID: s.KeyID, Trusted: isTrusted(in.trust, s)})
	}
	if !text {
		out, _ := json.Marshal(v)
		stdout.Write(append(out, '\n'))
		return exitOK
	}
	io.WriteString(stdout, "ok: "+in.path+" verified ("+v.Mode+")\npolicy "+label(v.Policy.Name, v.Policy.Version)+" sha256 "+v.Policy.SHA256+"\n")
	for _, s := range v.Signatures {
		note := " (trusted)"
		if !s.Trusted {
			note = " (not in the trust files: not checked)"
		}
		io.WriteString(stdout, "signature "+s.Alg+" "+s.KeyID+note+"\n")
	}
	return exitOK
}

// verifiedBundle is verify's JSON output.
type verifiedBundle struct {
	Verified bool   `json:"verified"`
	Path     string `json:"path"`
	Mode     string `json:"mode"`
	Policy   struct {
		Name    string `json:"name"`
		Version string `json:"version"`
		SHA256  string `json:"sha256"`
	} `json:"policy"`
	Signatures []signatureInfo `json:"signatures"`
}

type signatureInfo struct {
	Alg     string `json:"alg"`
	KeyID   string `json:"key_id"`
	Trusted bool   `json:"trusted"` // false: not in the trust files, so not checked
}

// verifyFlags are what verify and verify-receipt share: whom to trust and
// which signatures a document must carry.
type verifyFlags struct {
	trustFiles signFileList
	mode       *string
}

func addVerifyFlags(fs *flag.FlagSet, trustHelp, modeHelp string) *verifyFlags {
	vf := &verifyFlags{}
	fs.Var(&vf.trustFiles, "trust", trustHelp)
	vf.mode = fs.String("mode", "hybrid", modeHelp)
	return vf
}

// verifyInput is a parsed verify command line: the trust keys, the required
// mode, and the one document to check.
type verifyInput struct {
	trust []bundle.PublicKey
	mode  bundle.Mode
	path  string
	data  []byte
}

// load checks the command line (at least one --trust, exactly one file) and
// reads what it names. ok false means the command is over with exit code.
func (vf *verifyFlags) load(fs *flag.FlagSet, name string, stderr io.Writer) (in verifyInput, code int, ok bool) {
	if len(vf.trustFiles) == 0 || fs.NArg() != 1 {
		return in, signUsage(fs), false
	}
	mode, err := bundle.ParseMode(*vf.mode)
	if err != nil {
		io.WriteString(stderr, "ctxgate "+name+": "+err.Error()+"\n")
		return in, exitUsage, false
	}
	trust, err := signing.ReadTrust(vf.trustFiles...)
	if err != nil {
		return in, fail(stderr, name, err), false
	}
	data, err := safefile.Read(fs.Arg(0), safefile.MaxPolicyBytes)
	if err != nil {
		return in, fail(stderr, name, err), false
	}
	return verifyInput{trust: trust, mode: mode, path: fs.Arg(0), data: data}, exitOK, true
}

func isTrusted(trust []bundle.PublicKey, s bundle.Signature) bool {
	for _, k := range trust {
		if k.Alg == s.Alg && k.ID == s.KeyID {
			return true
		}
	}
	return false
}

func runVerifyReceipt(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := signFlagSet("verify-receipt", "--trust PUB [--mode M] [--request FILE] [--decision FILE] [--format json|text] RECEIPT.json", stderr)
	vf := addVerifyFlags(fs, "trust file of public keys (repeatable)", "signatures required: hybrid, ed25519 or ml-dsa-65 (alias ml-dsa)")
	reqFile := fs.String("request", "", "also check that the receipt covers this request file, byte for byte")
	decFile := fs.String("decision", "", "also check that the receipt covers this decision file, byte for byte (what eval wrote, newline included)")
	var of outputFormat
	of.register(fs)
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	in, code, ok := vf.load(fs, "verify-receipt", stderr)
	if !ok {
		return code
	}
	text, err := of.text(stdout)
	if err != nil {
		return fail(stderr, "verify-receipt", err)
	}
	r, err := signing.VerifyReceipt(in.data, in.trust, in.mode)
	if err != nil {
		return fail(stderr, "verify-receipt", signError(in.path+": "+err.Error()))
	}
	var req, dec []byte
	for _, f := range []struct {
		path string
		dst  *[]byte
	}{{*reqFile, &req}, {*decFile, &dec}} {
		if f.path == "" {
			continue
		}
		if *f.dst, err = os.ReadFile(f.path); err != nil {
			return fail(stderr, "verify-receipt", err)
		}
	}
	if err := r.Matches(req, dec); err != nil {
		return fail(stderr, "verify-receipt", err)
	}
	if !text {
		// A file given was checked, and matches (a mismatch exits 1 above).
		out, _ := json.Marshal(verifiedReceipt{Verified: true, Path: in.path, Mode: in.mode.String(), Time: r.Time,
			PolicySHA256: r.PolicySHA256, RequestSHA256: r.RequestSHA256, DecisionSHA256: r.DecisionSHA256,
			RequestChecked: req != nil, DecisionChecked: dec != nil})
		stdout.Write(append(out, '\n'))
		return exitOK
	}
	io.WriteString(stdout, "ok: "+in.path+" verified ("+in.mode.String()+")\n"+
		"time "+r.Time+"\npolicy sha256 "+r.PolicySHA256+"\nrequest sha256 "+r.RequestSHA256+matchNote(req)+
		"\ndecision sha256 "+r.DecisionSHA256+matchNote(dec)+"\n")
	return exitOK
}

// verifiedReceipt is verify-receipt's JSON output. request_checked and
// decision_checked say a file was given with --request or --decision and
// matches the receipt byte for byte (a mismatch exits 1 instead).
type verifiedReceipt struct {
	Verified        bool   `json:"verified"`
	Path            string `json:"path"`
	Mode            string `json:"mode"`
	Time            string `json:"time"`
	PolicySHA256    string `json:"policy_sha256"`
	RequestSHA256   string `json:"request_sha256"`
	DecisionSHA256  string `json:"decision_sha256"`
	RequestChecked  bool   `json:"request_checked"`
	DecisionChecked bool   `json:"decision_checked"`
}

func matchNote(b []byte) string {
	if b == nil {
		return ""
	}
	return " (matches)"
}

type signError string

func (e signError) Error() string { return string(e) }
