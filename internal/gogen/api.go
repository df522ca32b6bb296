package gogen

import (
	"regexp"
	"strings"
)

// A generated machine embeds fsmrt.Machine and so has its methods, which go doc lists under
// fsmrt.Machine, not under the machine's own type. The machine's doc comment lists them
// with the machine's own types instead of thin typed methods that would only call them:
// that costs no code and no call, and go doc of the machine type shows its whole API.

// machineAPI is the exported method set of fsmrt.Machine, in the runtime's type parameters
// (S, E, R, C, X) and its own type names, grouped as the machine's doc comment shows it (""
// starts a group). TestMachineAPIListed keeps it equal to the runtime's.
var machineAPI = []string{
	"State() S",
	"Fire(ctx context.Context, e E) (S, error)",
	"FireWith(ctx context.Context, e E, in Input[R]) (S, error)",
	"Can(ctx context.Context, e E) bool",
	"CanWith(ctx context.Context, e E, in Input[R]) bool",
	"Permitted(ctx context.Context, buf []E) []E",
	"PermittedWith(ctx context.Context, in Input[R], buf []E) []E",
	"Start(ctx context.Context) error",
	"StartWith(ctx context.Context, in Input[R]) error",
	"Started() bool",
	"Seq() int64",
	"Answered() bool",
	"Snapshot() Snapshot[S, C, X]",
	"SetLogger(l *slog.Logger)",
	"",
	"SetStore(s Store)",
	"StoreName() string",
	"Create(ctx context.Context, in Input[R]) error",
	"SetOwner(owner string, lease time.Duration)",
	"EventLog(ctx context.Context, after int64) ([]LogEntry[S, E, R], error)",
	"StoredSnapshot(ctx context.Context) (s Snapshot[S, C, X], ok bool, err error)",
	"DeliverEffects(ctx context.Context, limit int) (int, error)",
	"Migrate(ctx context.Context) (bool, error)",
	"Migrated() string",
	"",
	"Describe() Description",
}

// runtimeTypes are the runtime's types machineAPI names unqualified.
var runtimeTypes = map[string]bool{"Description": true, "Input": true, "LogEntry": true, "Snapshot": true, "Store": true}

var apiIdent = regexp.MustCompile(`\.?\b[A-Za-z_][A-Za-z0-9_]*\b`)

// registryAPI is the exported method set of fsmrt.Registry, in its type parameters (M, S).
// TestMachineAPIListed keeps it equal to the runtime's.
var registryAPI = []string{
	"Register(m M) error",
	"Get(id string) (M, error)",
	"GetOrNil(id string) M",
	"Remove(id string) bool",
	"Do(id string, fn func(M) error) error",
	"ListActive() []M",
	"ListAll() []M",
	"ByState(s S) []M",
	"Where(keep func(M) bool) []M",
	"ActiveCount() int",
	"CleanupTerminal() int",
	"Init(name string, id func(M) string, maxActive int, logger *slog.Logger)",
	"Logger() *slog.Logger",
}

// apiListing is the doc comment's listing of the methods machine T has from fsmrt.Machine,
// with its types: role and extra are the machine's R and X as Go writes them.
func (g *gen) apiListing() string {
	subst := map[string]string{"S": "State", "E": "Event", "R": g.role().GoString(), "C": g.name("Context"), "X": g.extra().GoString()}
	return listing("Besides its own methods, a "+g.T+" has those of the runtime's machine it embeds (go doc\nfsmrt.Machine says what each does), with its own types:", "m *"+g.T, machineAPI, subst)
}

// registryListing is the doc comment's listing of the methods registry type R has from
// fsmrt.Registry.
func (g *gen) registryListing(R string) string {
	subst := map[string]string{"M": "*" + g.T, "S": "State"}
	return listing("Besides its own methods, a "+R+" has those of the runtime's registry it embeds (go doc\nfsmrt.Registry says what each does), with its own types:", "r *"+R, registryAPI, subst)
}

// listing writes, as doc comment lines after an intro, the methods api of receiver recv,
// their type parameters replaced as subst says and the runtime's types qualified.
func listing(intro, recv string, api []string, subst map[string]string) string {
	var b strings.Builder
	b.WriteString("\n//")
	for _, line := range strings.Split(intro, "\n") {
		b.WriteString("\n// " + line)
	}
	b.WriteString("\n//")
	for _, m := range api {
		if m == "" {
			b.WriteString("\n//")
			continue
		}
		name, params, _ := strings.Cut(m, "(")
		sig := name + "(" + apiIdent.ReplaceAllStringFunc(params, func(id string) string {
			if strings.HasPrefix(id, ".") {
				return id // a qualified name: context.Context
			}
			if s, ok := subst[id]; ok {
				return s
			}
			if runtimeTypes[id] {
				return "fsmrt." + id
			}
			return id
		})
		b.WriteString("\n//\tfunc (" + recv + ") " + sig)
	}
	return b.String()
}
