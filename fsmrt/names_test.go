package fsmrt_test

import (
	"slices"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
)

func TestVersionConstants(t *testing.T) {
	if !(fsmrt.MinVersion <= fsmrt.Version && fsmrt.Version <= fsmrt.MaxVersion) {
		t.Fatalf("want MinVersion <= Version <= MaxVersion, got %d, %d, %d",
			fsmrt.MinVersion, fsmrt.Version, fsmrt.MaxVersion)
	}
	if fsmrt.MinVersion < 1 {
		t.Fatalf("MinVersion = %d, want at least 1", fsmrt.MinVersion)
	}
	// The guards generated code writes compile for a supported version (a negative
	// constant would not convert).
	const _ = fsmrt.EnforceVersion(fsmrt.MaxVersion - fsmrt.Version)
	const _ = fsmrt.EnforceVersion(fsmrt.Version - fsmrt.MinVersion)
}

func TestNamesString(t *testing.T) {
	tests := []struct {
		n    *fsmrt.Names
		v    int
		want string
	}{
		{&stateNames, 0, "idle"},
		{&stateNames, 1, "running"},
		{&stateNames, 3, "failed"},
		{&stateNames, 4, "State(4)"},
		{&stateNames, 255, "State(255)"},
		{&stateNames, -1, "State(-1)"},
		{&stateNames, -300, "State(-300)"},
		{&roleNames, 0, ""},
		{&roleNames, 2, "viewer"},
		{&roleNames, 3, "Role(3)"},
		{&fsmrt.Names{Type: "Empty"}, 0, "Empty(0)"},
	}
	for _, tt := range tests {
		if got := tt.n.String(tt.v); got != tt.want {
			t.Errorf("%s.String(%d) = %q, want %q", tt.n.Type, tt.v, got, tt.want)
		}
	}
	// Through the typed wrappers.
	if got := sRunning.String(); got != "running" {
		t.Errorf("sRunning.String() = %q", got)
	}
	if got := tState(200).String(); got != "State(200)" {
		t.Errorf("tState(200).String() = %q", got)
	}
}

func TestNamesParse(t *testing.T) {
	tests := []struct {
		n       *fsmrt.Names
		name    string
		want    int
		wantErr string
	}{
		{&stateNames, "idle", 0, ""},
		{&stateNames, "running", 1, ""},
		{&stateNames, "failed", 3, ""},
		{&stateNames, "Idle", 0, `review: unknown state "Idle"`},
		{&stateNames, "nope", 0, `review: unknown state "nope"`},
		{&stateNames, "", 0, `review: unknown state ""`},
		{&eventNames, "retry", 3, ""},
		{&eventNames, "idle", 0, `review: unknown event "idle"`},
		{&roleNames, "admin", 1, ""},
		{&roleNames, "viewer", 2, ""},
		// The empty name is no value's, even with None set and List[0] == "".
		{&roleNames, "", 0, `review: unknown role ""`},
		{&fsmrt.Names{Package: "p", What: "criticality value"}, "x", 0, `p: unknown criticality value "x"`},
	}
	for _, tt := range tests {
		got, err := tt.n.Parse(tt.name)
		if tt.wantErr != "" {
			if err == nil {
				t.Errorf("%s Parse(%q) = %d, nil; want error %q", tt.n.What, tt.name, got, tt.wantErr)
				continue
			}
			if err.Error() != tt.wantErr {
				t.Errorf("%s Parse(%q) error = %q, want %q", tt.n.What, tt.name, err, tt.wantErr)
			}
			if got != 0 {
				t.Errorf("%s Parse(%q) = %d on error, want 0", tt.n.What, tt.name, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s Parse(%q) = %d, %v; want %d, nil", tt.n.What, tt.name, got, err, tt.want)
		}
		// The typed form agrees.
		if v, err := fsmrt.Parse[uint8](tt.n, tt.name); int(v) != tt.want || (err != nil) != (tt.wantErr != "") {
			t.Errorf("%s Parse[uint8](%q) = %d, %v", tt.n.What, tt.name, v, err)
		}
	}
}

func TestNamesParseFirstMatch(t *testing.T) {
	n := &fsmrt.Names{Package: "p", What: "x", List: []string{"a", "b", "a"}}
	if got, err := n.Parse("a"); err != nil || got != 0 {
		t.Fatalf("Parse(a) = %d, %v; want 0, nil", got, err)
	}
}

func TestNamesMarshal(t *testing.T) {
	tests := []struct {
		n       *fsmrt.Names
		v       int
		want    string
		wantErr string
	}{
		{&stateNames, 0, "idle", ""},
		{&stateNames, 3, "failed", ""},
		{&stateNames, 4, "", "review: invalid state 4"},
		{&stateNames, -1, "", "review: invalid state -1"},
		{&stateNames, 1000, "", "review: invalid state 1000"},
		{&roleNames, 0, "", ""},
		{&roleNames, 1, "admin", ""},
		{&roleNames, 3, "", "review: invalid role 3"},
		{&fsmrt.Names{Package: "p", What: "event"}, 0, "", "p: invalid event 0"},
	}
	for _, tt := range tests {
		got, err := tt.n.Marshal(tt.v)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%s Marshal(%d) = %q, %v; want error %q", tt.n.What, tt.v, got, err, tt.wantErr)
			}
			if got != nil {
				t.Errorf("%s Marshal(%d) = %q on error, want nil", tt.n.What, tt.v, got)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("%s Marshal(%d) = %q, %v; want %q, nil", tt.n.What, tt.v, got, err, tt.want)
		}
		if got == nil {
			t.Errorf("%s Marshal(%d) = nil, want non-nil bytes", tt.n.What, tt.v)
		}
	}
}

func TestUnmarshal(t *testing.T) {
	t.Run("success", func(t *testing.T) {
		var s tState = 9
		if err := fsmrt.Unmarshal(&stateNames, []byte("done"), &s); err != nil || s != sDone {
			t.Fatalf("Unmarshal(done) = %v, %v; want done, nil", s, err)
		}
		if err := fsmrt.Unmarshal(&stateNames, []byte("idle"), &s); err != nil || s != sIdle {
			t.Fatalf("Unmarshal(idle) = %v, %v; want idle, nil", s, err)
		}
	})
	t.Run("unknown leaves value", func(t *testing.T) {
		s := sRunning
		err := fsmrt.Unmarshal(&stateNames, []byte("bogus"), &s)
		if err == nil || err.Error() != `review: unknown state "bogus"` {
			t.Fatalf("Unmarshal(bogus) error = %v", err)
		}
		if s != sRunning {
			t.Fatalf("Unmarshal(bogus) changed the value to %v", s)
		}
	})
	t.Run("empty without None", func(t *testing.T) {
		s := sFailed
		for _, b := range [][]byte{nil, {}} {
			err := fsmrt.Unmarshal(&stateNames, b, &s)
			if err == nil || err.Error() != `review: unknown state ""` {
				t.Fatalf("Unmarshal(%q) error = %v", b, err)
			}
			if s != sFailed {
				t.Fatalf("Unmarshal(%q) changed the value to %v", b, s)
			}
		}
	})
	t.Run("empty with None", func(t *testing.T) {
		for _, b := range [][]byte{nil, {}} {
			r := rViewer
			if err := fsmrt.Unmarshal(&roleNames, b, &r); err != nil || r != rNone {
				t.Fatalf("Unmarshal(%q) = %v, %v; want 0, nil", b, r, err)
			}
		}
		r := rNone
		if err := fsmrt.Unmarshal(&roleNames, []byte("viewer"), &r); err != nil || r != rViewer {
			t.Fatalf("Unmarshal(viewer) = %v, %v; want viewer, nil", r, err)
		}
		err := fsmrt.Unmarshal(&roleNames, []byte("root"), &r)
		if err == nil || err.Error() != `review: unknown role "root"` || r != rViewer {
			t.Fatalf("Unmarshal(root) = %v, %v", r, err)
		}
	})
	t.Run("wider types", func(t *testing.T) {
		var w16 uint16 = 7
		if err := fsmrt.Unmarshal(&eventNames, []byte("cancel"), &w16); err != nil || w16 != 2 {
			t.Fatalf("Unmarshal uint16 = %d, %v", w16, err)
		}
		var w32 tWideState = 7
		if err := fsmrt.Unmarshal(&eventNames, []byte("retry"), &w32); err != nil || w32 != 3 {
			t.Fatalf("Unmarshal uint32 = %d, %v", w32, err)
		}
		noneWide := &fsmrt.Names{Package: "p", What: "w", List: []string{"", "x"}, None: true}
		w32 = 5
		if err := fsmrt.Unmarshal(noneWide, nil, &w32); err != nil || w32 != 0 {
			t.Fatalf("Unmarshal uint32 None = %d, %v", w32, err)
		}
	})
}

func TestAll(t *testing.T) {
	if got, want := fsmrt.All[tState](int(numStates)), []tState{sIdle, sRunning, sDone, sFailed}; !slices.Equal(got, want) {
		t.Errorf("All[tState](4) = %v, want %v", got, want)
	}
	if got := fsmrt.All[tEvent](0); got == nil || len(got) != 0 {
		t.Errorf("All[tEvent](0) = %#v, want empty non-nil", got)
	}
	got16 := fsmrt.All[uint16](300)
	if len(got16) != 300 {
		t.Fatalf("All[uint16](300) has %d values", len(got16))
	}
	for i, v := range got16 {
		if int(v) != i {
			t.Fatalf("All[uint16](300)[%d] = %d", i, v)
		}
	}
	if got, want := fsmrt.All[tWideState](3), []tWideState{0, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("All[tWideState](3) = %v, want %v", got, want)
	}
	// Each call returns a fresh slice.
	a := fsmrt.All[tState](2)
	a[0] = 9
	if b := fsmrt.All[tState](2); b[0] != 0 {
		t.Errorf("All returned a shared slice: %v", b)
	}
}
