package gate

// A policy's signals.<key> groups, each a unit: one file, signal_<key>.go,
// holds the group's config type and defaults, how it is read from the
// policy document and validated, the signal names it reports, and the
// computation with the scratch it owns; signalGroups below registers it,
// and Policy has a field for its config. Adding a signal is that file, one
// line here and the Policy field (docs/architecture.md has a worked
// example).

// signalGroup describes one group.
type signalGroup struct {
	key     string   // the policy member: signals.<key>
	reports []string // every signal the group may report, in report order
	// order is the order_by ordering the group provides ("" for none); its
	// state is then a chunkScorer.
	order string
	// on reports whether p has the group switched on.
	on func(p *Policy) bool
	// read decodes the group's object into p, defaults for absent members.
	read func(p *Policy, o obj) *Error
	// check validates the group's config in p (only called when on).
	check func(p *Policy) *Error
	// state returns a new per-engine state for the group.
	state func() groupState
}

// signalGroups are the groups in the order they run and report.
var signalGroups = [...]*signalGroup{
	&similarityGroup,
	&qualityGroup,
	&sufficiencyGroup,
	&evidenceGroup,
	&retrievalGroup,
	&answerCoverageGroup,
	&chunkRelevanceGroup,
	&answerabilityGroup,
}

// groupState is one group's computation and the scratch it keeps between
// decisions (one per engine: engines are not shared between goroutines).
type groupState interface {
	// run computes the group for the prepared request (Engine.prepare
	// filled e.work), reports its signals (e.addSignal), writes its
	// messages (e.a) and applies its filter (chunkWork.kept and reason).
	run(e *Engine, req *Request)
}

// chunkScorer is the state of a group with an ordering (signalGroup.order).
type chunkScorer interface {
	groupState
	// scored reports whether the decision gave the group inputs to score
	// chunks by; chunkScore is chunk i's score then.
	scored() bool
	chunkScore(i int) float64
}

// outcomeWriter is the state of a group that reports numbers per chunk in
// the decision's chunk outcomes.
type outcomeWriter interface {
	groupState
	writeOutcome(o *ChunkOutcome, i int)
}

// groupIndex returns g's index in signalGroups, or -1.
func groupIndex(g *signalGroup) int {
	for i, r := range signalGroups {
		if r == g {
			return i
		}
	}
	return -1
}

// groupNamed returns the group whose key is key, or nil.
func groupNamed(key string) *signalGroup {
	for _, g := range signalGroups {
		if g.key == key {
			return g
		}
	}
	return nil
}

// signalGroupOf returns the key of the group that reports the signal name,
// or "".
func signalGroupOf(name string) string {
	for _, g := range signalGroups {
		for _, r := range g.reports {
			if r == name {
				return g.key
			}
		}
	}
	return ""
}

// groupOn reports whether p has the group key switched on.
func groupOn(p *Policy, key string) bool {
	g := groupNamed(key)
	return g != nil && g.on(p)
}

// signalKeys is the space-separated list of the groups' keys, for the
// policy reader's unknown-member check.
var signalKeys = func() string {
	s := ""
	for i, g := range signalGroups {
		if i > 0 {
			s += " "
		}
		s += g.key
	}
	return s
}()

// readSignals reads the policy's signals object: every group present is
// switched on with its config.
func readSignals(p *Policy, top obj) *Error {
	s, ok, err := top.Object("signals", false)
	if err != nil || !ok {
		return err
	}
	if err := s.Strict(signalKeys); err != nil {
		return err
	}
	for _, g := range signalGroups {
		o, ok, err := s.Object(g.key, false)
		if err != nil {
			return err
		}
		if ok {
			if err := g.read(p, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSignals validates every group p has switched on, in order.
func (p *Policy) checkSignals() error {
	for _, g := range signalGroups {
		if g.on(p) && g.check != nil {
			if err := g.check(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// state returns the engine's state for g, made at first use.
func (e *Engine) state(g *signalGroup) groupState {
	i := groupIndex(g)
	if e.states[i] == nil {
		e.states[i] = g.state()
	}
	return e.states[i]
}

// resolveSignals prepares the engine's per-decision lists from its policy:
// the states of the groups that are on, in order, those that write chunk
// outcomes, and the order_by orderings.
func (e *Engine) resolveSignals() {
	e.running, e.writers = e.running[:0], e.writers[:0]
	for _, g := range signalGroups {
		if !g.on(e.policy) {
			continue
		}
		st := e.state(g)
		e.running = append(e.running, st)
		if w, ok := st.(outcomeWriter); ok {
			e.writers = append(e.writers, w)
		}
	}
	e.orderings = e.orderings[:0]
	for _, name := range e.policy.OrderBy {
		o := ordering{name: name, by: builtinOrder(name)}
		if o.by < 0 {
			for _, g := range signalGroups {
				if g.order == name {
					o.scorer, _ = e.state(g).(chunkScorer)
				}
			}
		}
		e.orderings = append(e.orderings, o)
	}
}
