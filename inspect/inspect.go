// Package inspect is a read-only web view of the machines kept in an fsmrt.Store: an
// http.Handler a program mounts in its own server, behind its own authentication, as it
// would any handler:
//
//	h, err := inspect.New(store, review.NewTask(nil).Describe(), build.NewTask(nil).Describe())
//	if err != nil {
//		return err
//	}
//	mux.Handle("/inspect/", requireOperator(http.StripPrefix("/inspect", h)))
//
// For each machine type it draws the spec's diagram (server-side SVG, no script) with the
// number of stored instances in each state, counts those past each timeout level and by
// counter, lists the instances by state and timeout level a page at a time (the store's
// Find with After and Limit), and shows one instance: its state, context and counters, its
// log as a timeline, its armed deadlines and outbox effects (when the store is an
// fsmrt.PendingReader), and its path on the diagram. It never writes to the store. Every
// name and datum from the descriptions and the store is escaped (html/template).
//
// Links are relative, so the handler works under any prefix http.StripPrefix removes.
package inspect

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

//go:embed templates/*.html
var templateFS embed.FS

// Handler serves the inspector. Make one with New.
type Handler struct {
	store    fsmrt.Store
	pending  fsmrt.PendingReader // nil when the store is not one
	machines []fsmrt.Description
	tmpl     *template.Template
	mux      *http.ServeMux
	// Now is the time the pages measure timeouts against; time.Now when nil.
	Now func() time.Time
	// PageSize is the number of instances a list shows on one page (50 when 0).
	PageSize int
}

// New returns the inspector of the machines described, stored in store. It refuses no
// machine, two with one name, and a transition naming a state or event out of range.
func New(store fsmrt.Store, machines ...fsmrt.Description) (*Handler, error) {
	if store == nil {
		return nil, errors.New("inspect: no store")
	}
	if len(machines) == 0 {
		return nil, errors.New("inspect: no machine to show")
	}
	for i, d := range machines {
		if err := check(&d); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(machines[:i], func(x fsmrt.Description) bool { return x.Machine == d.Machine }) {
			return nil, fmt.Errorf("inspect: machine %q described twice", d.Machine)
		}
	}
	t, err := template.New("").Funcs(funcs).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	h := &Handler{store: store, machines: machines, tmpl: t, mux: http.NewServeMux()}
	h.pending, _ = store.(fsmrt.PendingReader)
	h.mux.HandleFunc("GET /{$}", h.overview)
	h.mux.HandleFunc("GET /machine", h.machine)
	h.mux.HandleFunc("GET /instances", h.instances)
	h.mux.HandleFunc("GET /instance", h.instance)
	return h, nil
}

// check refuses a description the pages cannot draw.
func check(d *fsmrt.Description) error {
	if d.Machine == "" || len(d.States) == 0 {
		return errors.New("inspect: a machine without a name or states")
	}
	for i, t := range d.Transitions {
		for _, s := range slices.Concat(t.From, t.To) {
			if s < 0 || s >= len(d.States) {
				return fmt.Errorf("inspect: %s: transition %d names state %d of %d", d.Machine, i, s, len(d.States))
			}
		}
		for _, e := range t.Events {
			if e < 0 || e >= len(d.Events) {
				return fmt.Errorf("inspect: %s: transition %d names event %d of %d", d.Machine, i, e, len(d.Events))
			}
		}
	}
	return nil
}

// ServeHTTP serves the pages: GET only; anything else is refused (the inspector is
// read-only).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the inspector is read-only", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Handler) pageSize() int {
	if h.PageSize > 0 {
		return h.PageSize
	}
	return 50
}

// describe returns the machine named by the request's m, or writes a 404.
func (h *Handler) describe(w http.ResponseWriter, r *http.Request) (*fsmrt.Description, bool) {
	name := r.URL.Query().Get("m")
	for i := range h.machines {
		if h.machines[i].Machine == name {
			return &h.machines[i], true
		}
	}
	h.fail(w, http.StatusNotFound, fmt.Errorf("no machine %q here", name))
	return nil, false
}

// render writes page name with data, or a 500 when it fails (before anything is written).
func (h *Handler) render(w http.ResponseWriter, name string, data any) {
	var buf bytes.Buffer
	if err := h.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, "inspect: rendering the page failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

// fail shows an error page: the message is escaped as any datum.
func (h *Handler) fail(w http.ResponseWriter, code int, err error) {
	var buf bytes.Buffer
	if h.tmpl.ExecuteTemplate(&buf, "error.html", struct {
		Title string
		Code  int
		Err   string
	}{http.StatusText(code), code, err.Error()}) != nil {
		http.Error(w, http.StatusText(code), code)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}

// ctx bounds the store's reads of one page.
func pageContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), 30*time.Second)
}
