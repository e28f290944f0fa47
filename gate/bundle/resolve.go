package bundle

import "github.com/ctxgate/ctxgate/gate"

// Resolve turns a host's configuration (the policy, optionally the trust
// keys as JSON, and the trust mode's name) into the policy JSON to run, with
// one rule set for every host: the Extism guest, the native runner and the
// CLI.
//   - trust keys and a policy: the policy must be a bundle they sign, with
//     the signatures mode requires (ParseMode; "" is hybrid);
//   - a bundle without trust keys: refused, since it cannot be checked;
//   - trust keys and no policy: refused. The built-in default is not signed,
//     and an empty policy is what a host reads from a file caught mid-write
//     or a mount that is not there yet: running the default then would be a
//     silent bypass of the signature requirement;
//   - a mode without trust keys: refused, as the host believes signatures
//     are checked when nothing is;
//   - no policy and no trust keys: nil, which selects the built-in default
//     (it is part of the module the host already chose to run).
//
// policyField, trustField and modeField name the configuration keys in
// errors.
func Resolve(policy, trustJSON []byte, mode string, policyField, trustField, modeField string) ([]byte, error) {
	m, ok := modeByName(mode)
	switch {
	case !ok:
		return nil, unknownMode(modeField, mode)
	case mode != "" && len(trustJSON) == 0:
		return nil, &gate.Error{Code: gate.CodeBadPolicy, Field: modeField,
			Message: "set, but no " + trustField + " are configured: nothing would be verified"}
	case len(policy) == 0 && len(trustJSON) > 0:
		return nil, &gate.Error{Code: gate.CodeBadPolicy, Field: policyField,
			Message: trustField + " are configured but there is no policy: a signed bundle is required (the built-in default is not signed)"}
	case len(policy) == 0:
		return nil, nil
	case len(trustJSON) > 0:
		keys, err := ParseTrust(trustJSON)
		if err != nil {
			return nil, err
		}
		if !IsBundle(policy) {
			return nil, &gate.Error{Code: gate.CodeBadPolicy, Field: policyField,
				Message: trustField + " are configured, so the policy must be a signed bundle"}
		}
		return Open(policy, keys, m)
	case IsBundle(policy):
		return nil, &gate.Error{Code: gate.CodeBadPolicy, Field: trustField,
			Message: "the policy is a signed bundle but no " + trustField + " are configured"}
	}
	return policy, nil
}
