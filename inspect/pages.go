package inspect

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// machineLink and the others are the relative links between the pages.
func machineLink(m string) string { return "machine?" + url.Values{"m": {m}}.Encode() }

func listLink(m, state, level, after string) string {
	return filterLink(m, listFilter{State: state, Level: level}, after)
}

// listFilter is what an instance list selects: a state, past a timeout level, idle for
// longer than a duration, with effects pending or failing.
type listFilter struct {
	State, Level, Idle, Effects string
}

// filterLink is the link to the list of m's instances f selects, after ID after.
func filterLink(m string, f listFilter, after string) string {
	v := url.Values{"m": {m}}
	for _, p := range [...][2]string{{"state", f.State}, {"level", f.Level}, {"idle", f.Idle}, {"effects", f.Effects}, {"after", after}} {
		if p[1] != "" {
			v.Set(p[0], p[1])
		}
	}
	return "instances?" + v.Encode()
}

func instanceLink(m, id string) string {
	return "instance?" + url.Values{"m": {m}, "id": {id}}.Encode()
}

// overviewRow is one machine on the overview.
type overviewRow struct {
	Machine, Link string
	Instances     int
	States        int
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := pageContext(r)
	defer cancel()
	var rows []overviewRow
	for _, d := range h.machines {
		all, err := h.store.Find(ctx, fsmrt.Query{Machine: d.Machine})
		if err != nil {
			h.fail(w, http.StatusInternalServerError, err)
			return
		}
		rows = append(rows, overviewRow{Machine: d.Machine, Link: machineLink(d.Machine), Instances: len(all), States: len(d.States)})
	}
	h.render(w, "overview.html", struct {
		Title    string
		Machines []overviewRow
	}{"Machines", rows})
}

// stateRow is one state of the machine page: its count and those past each level.
type stateRow struct {
	Name, Link string
	Count      int
	Terminal   bool
	Timeout    string
	Levels     []levelCell
}

type levelCell struct {
	Name, Link string
	Count      int
	Has        bool // the state's timeout has this level
}

// counterRow counts the instances by one counter: At[k-1] have it at k or more.
type counterRow struct {
	Name     string
	PerState bool
	Limit    int
	At       []int
}

func (h *Handler) machine(w http.ResponseWriter, r *http.Request) {
	d, ok := h.describe(w, r)
	if !ok {
		return
	}
	ctx, cancel := pageContext(r)
	defer cancel()
	now := h.now()
	byState, err := h.countByState(ctx, fsmrt.Query{Machine: d.Machine})
	if err != nil {
		h.fail(w, http.StatusInternalServerError, err)
		return
	}
	all := total(byState)
	counts := make([]int, len(d.States))
	other := all // instances in a state the description does not have (another spec)
	for i, s := range d.States {
		counts[i] = byState[s.Name]
		other -= counts[i]
	}
	// Those past each level, by state: one count per level.
	past := make([][]int, len(d.Levels))
	for l, name := range d.Levels {
		past[l] = make([]int, len(d.States))
		found, err := h.countByState(ctx, fsmrt.Query{Machine: d.Machine, Deadline: "level:" + name, Due: now})
		if err != nil {
			h.fail(w, http.StatusInternalServerError, err)
			return
		}
		for i, s := range d.States {
			past[l][i] = found[s.Name]
		}
	}
	var rows []stateRow
	for i, s := range d.States {
		row := stateRow{Name: s.Name, Link: listLink(d.Machine, s.Name, "", ""), Count: counts[i], Terminal: s.Terminal}
		if s.Timeout > 0 {
			row.Timeout = s.Timeout.String()
		}
		for l, name := range d.Levels {
			has := slices.ContainsFunc(s.Levels, func(x fsmrt.LevelDescription) bool { return x.Name == name })
			row.Levels = append(row.Levels, levelCell{Name: name, Count: past[l][i], Has: has, Link: listLink(d.Machine, s.Name, name, "")})
		}
		rows = append(rows, row)
	}
	var levels []levelCell
	for l, name := range d.Levels {
		n := 0
		for _, c := range past[l] {
			n += c
		}
		levels = append(levels, levelCell{Name: name, Count: n, Link: listLink(d.Machine, "", name, ""), Has: true})
	}
	var counters []counterRow
	for _, c := range d.Counters {
		row := counterRow{Name: c.Name, PerState: c.PerState, Limit: c.Limit}
		top := c.Limit
		if top <= 0 {
			top = 1
		}
		for k := 1; k <= top; k++ {
			found, err := h.countByState(ctx, fsmrt.Query{Machine: d.Machine, Counter: c.Name, AtLeast: k})
			if err != nil {
				h.fail(w, http.StatusInternalServerError, err)
				return
			}
			row.At = append(row.At, total(found))
		}
		counters = append(counters, row)
	}
	// The instances owing effects, and those whose last delivery failed.
	var owing [2]int
	for i, c := range [...]fsmrt.EffectCondition{fsmrt.EffectsPending, fsmrt.EffectsFailing} {
		found, err := h.countByState(ctx, fsmrt.Query{Machine: d.Machine, Effects: c})
		if err != nil {
			h.fail(w, http.StatusInternalServerError, err)
			return
		}
		owing[i] = total(found)
	}
	// The outbox: the effects not delivered, oldest first, those tried most often first
	// to catch the eye in the attempts column.
	var effects []effectRow
	if h.pending != nil {
		es, err := h.pending.PendingEffects(ctx, fsmrt.PendingQuery{Machine: d.Machine, Limit: h.pageSize()})
		if err != nil {
			h.fail(w, http.StatusInternalServerError, err)
			return
		}
		for _, x := range es {
			effects = append(effects, effectRow{ID: x.ID, Link: instanceLink(d.Machine, x.ID), Name: x.Name, Key: x.Key, Owner: x.Owner, Seq: x.Seq, Index: x.Index, Attempts: x.Attempts, LeaseUntil: x.LeaseUntil,
				LastError: x.LastError, FailedAt: x.FailedAt})
		}
	}
	h.render(w, "machine.html", struct {
		Title, Machine, Spec, AllLink string
		Total, Other                  int
		Diagram                       *diagram
		States                        []stateRow
		Levels                        []levelCell
		Counters                      []counterRow
		Pending                       bool
		Effects                       []effectRow
		EffectsLimit                  int
		Owing, Failing                int
		OwingLink, FailingLink        string
		Now                           time.Time
	}{d.Machine, d.Machine, d.Spec, listLink(d.Machine, "", "", ""), all, other,
		layout(d, counts, nil, -1), rows, levels, counters, h.pending != nil, effects, h.pageSize(),
		owing[0], owing[1], filterLink(d.Machine, listFilter{Effects: "pending"}, ""), filterLink(d.Machine, listFilter{Effects: "failing"}, ""), now})
}

func stateIndex(d *fsmrt.Description, name string) int {
	return slices.IndexFunc(d.States, func(s fsmrt.StateDescription) bool { return s.Name == name })
}

// instanceRow is one instance of a list.
type instanceRow struct {
	ID, Link, State string
	Version         int64
	UpdatedAt       time.Time
}

func (h *Handler) instances(w http.ResponseWriter, r *http.Request) {
	d, ok := h.describe(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	state, level, after := q.Get("state"), q.Get("level"), q.Get("after")
	f := listFilter{State: state, Level: level, Idle: q.Get("idle"), Effects: q.Get("effects")}
	query := fsmrt.Query{Machine: d.Machine, After: after, Limit: h.pageSize() + 1}
	if f.Idle != "" {
		idle, err := time.ParseDuration(f.Idle)
		if err != nil || idle < 0 {
			h.fail(w, http.StatusBadRequest, errors.New("idle: "+strconv.Quote(f.Idle)+" is not a duration (such as 1h30m)"))
			return
		}
		query.IdleSince = h.now().Add(-idle)
	}
	switch f.Effects {
	case "":
	case "pending":
		query.Effects = fsmrt.EffectsPending
	case "failing":
		query.Effects = fsmrt.EffectsFailing
	default:
		h.fail(w, http.StatusBadRequest, errors.New("effects: "+strconv.Quote(f.Effects)+" is neither pending nor failing"))
		return
	}
	if state != "" {
		if stateIndex(d, state) < 0 {
			h.fail(w, http.StatusBadRequest, errors.New("no state "+strconv.Quote(state)+" in "+d.Machine))
			return
		}
		query.States = []string{state}
	}
	if level != "" {
		if !slices.Contains(d.Levels, level) {
			h.fail(w, http.StatusBadRequest, errors.New("no timeout level "+strconv.Quote(level)+" in "+d.Machine))
			return
		}
		query.Deadline, query.Due = "level:"+level, h.now()
	}
	ctx, cancel := pageContext(r)
	defer cancel()
	found, err := h.store.Find(ctx, query)
	if err != nil {
		h.fail(w, http.StatusInternalServerError, err)
		return
	}
	next := ""
	if len(found) > h.pageSize() {
		found = found[:h.pageSize()]
		next = filterLink(d.Machine, f, found[len(found)-1].ID)
	}
	var rows []instanceRow
	for _, in := range found {
		rows = append(rows, instanceRow{ID: in.ID, Link: instanceLink(d.Machine, in.ID), State: in.State, Version: in.Version, UpdatedAt: in.UpdatedAt})
	}
	first := ""
	if after != "" {
		first = filterLink(d.Machine, f, "")
	}
	h.render(w, "instances.html", struct {
		Title, Machine, MachineLink, State, Level, Idle, Effects, After, Next, First string
		Instances                                                                    []instanceRow
	}{d.Machine + " instances", d.Machine, machineLink(d.Machine), state, level, f.Idle, f.Effects, after, next, first, rows})
}

// entryRow is one entry of the timeline.
type entryRow struct {
	Seq                         int64
	At                          time.Time
	Kind, Event, From, To       string
	Actor, Reason, Key, EventID string
}

type deadlineRow struct {
	Name, State, Event, Owner string
	At, LeaseUntil            time.Time
	Due                       bool
}

type effectRow struct {
	ID, Link         string // the instance's, on the machine page
	Name, Key, Owner string
	Seq              int64
	Index, Attempts  int
	LeaseUntil       time.Time
	// LastError is its last failed delivery's error, at FailedAt (a store that keeps
	// them: fsmrt.EffectErrorRecorder).
	LastError string
	FailedAt  time.Time
}

func (h *Handler) instance(w http.ResponseWriter, r *http.Request) {
	d, ok := h.describe(w, r)
	if !ok {
		return
	}
	id := r.URL.Query().Get("id")
	ctx, cancel := pageContext(r)
	defer cancel()
	loaded, err := h.store.Load(ctx, d.Machine, id)
	if err != nil {
		h.fail(w, http.StatusInternalServerError, err)
		return
	}
	if loaded.Version == 0 {
		h.fail(w, http.StatusNotFound, errors.New("no instance "+strconv.Quote(id)+" of "+d.Machine+" in the store"))
		return
	}
	log, err := h.store.Log(ctx, d.Machine, id, 0)
	if err != nil {
		h.fail(w, http.StatusInternalServerError, err)
		return
	}
	var entries []entryRow
	var context json.RawMessage
	var path [][2]int // the moves the log took, by state index
	for _, e := range log {
		row := entryRow{Seq: e.Seq, At: e.At, Kind: e.Kind, Event: e.Event, From: e.From, To: e.To, Key: e.Key}
		if v, err := decodeEntry(e.Data); err == nil {
			row.Actor, row.Reason, row.EventID = v.Actor, v.Reason, v.EventID
			if len(v.Context) > 0 {
				context = v.Context
			}
		}
		entries = append(entries, row)
		if f, t := stateIndex(d, e.From), stateIndex(d, e.To); f >= 0 && t >= 0 {
			path = append(path, [2]int{f, t})
		}
	}
	var cur *fsmrt.Current
	curErr := ""
	if d.Current != nil {
		if c, err := d.Current(ctx, h.store, id); err == nil {
			cur = &c
			context = c.Context
		} else {
			curErr = err.Error()
		}
	}
	now := h.now()
	var deadlines []deadlineRow
	var effects []effectRow
	if h.pending != nil {
		ds, err := h.pending.PendingDeadlines(ctx, fsmrt.PendingQuery{Machine: d.Machine, ID: id})
		if err != nil {
			h.fail(w, http.StatusInternalServerError, err)
			return
		}
		for _, x := range ds {
			deadlines = append(deadlines, deadlineRow{Name: x.Name, State: x.State, Event: x.Event, Owner: x.Owner, At: x.At, LeaseUntil: x.LeaseUntil, Due: !x.At.After(now)})
		}
		es, err := h.pending.PendingEffects(ctx, fsmrt.PendingQuery{Machine: d.Machine, ID: id})
		if err != nil {
			h.fail(w, http.StatusInternalServerError, err)
			return
		}
		for _, x := range es {
			effects = append(effects, effectRow{Name: x.Name, Key: x.Key, Owner: x.Owner, Seq: x.Seq, Index: x.Index, Attempts: x.Attempts, LeaseUntil: x.LeaseUntil,
				LastError: x.LastError, FailedAt: x.FailedAt})
		}
	}
	// Without the generated code to replay it, the counters are those the store keeps
	// for Find (fsmrt.IndexReader).
	var rowCounters []fsmrt.CounterValue
	rowsRead := false
	if ir, ok := h.store.(fsmrt.IndexReader); ok && cur == nil {
		rows, err := ir.IndexRows(ctx, d.Machine, id)
		if err != nil {
			h.fail(w, http.StatusInternalServerError, err)
			return
		}
		rowCounters, rowsRead = rows.Counters, true
		slices.SortFunc(rowCounters, func(a, b fsmrt.CounterValue) int {
			return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.State, b.State))
		})
	}
	counts := make([]int, len(d.States))
	current := stateIndex(d, loaded.State)
	if current >= 0 {
		counts[current] = 1
	}
	h.render(w, "instance.html", struct {
		Title, Machine, MachineLink, ID, State, Spec, Context string
		Version                                               int64
		SpecDiffers, Pending, RowsRead                        bool
		RowCounters                                           []fsmrt.CounterValue
		Current                                               *fsmrt.Current
		CurrentErr                                            string
		Entries                                               []entryRow
		Deadlines                                             []deadlineRow
		Effects                                               []effectRow
		Diagram                                               *diagram
		Now                                                   time.Time
	}{d.Machine + " " + id, d.Machine, machineLink(d.Machine), id, loaded.State, loaded.Spec, indent(context),
		loaded.Version, d.Spec != "" && loaded.Spec != d.Spec, h.pending != nil, rowsRead, rowCounters, cur, curErr,
		entries, deadlines, effects, layout(d, counts, path, current), now})
}

// indent pretty-prints JSON for the page; what is not JSON is shown as it is.
func indent(b json.RawMessage) string {
	if len(b) == 0 {
		return ""
	}
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return string(b)
	}
	return out.String()
}
