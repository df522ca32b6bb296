package postgres

import (
	"context"
	"errors"
	"testing"
)

// TestCorruptRows is the corpus of instance rows and logs edited in the database: Load
// refuses each with an error wrapping ErrCorrupt, naming the instance, where it handed
// them to Replay (or, for the state, to Find's readers) as they were.
func TestCorruptRows(t *testing.T) {
	dsn := newDatabase(t)
	st := openStore(t, dsn)
	conn := connect(t, dsn)
	ctx := context.Background()
	for i, c := range []struct{ name, edit string }{
		{"the state edited", `UPDATE fsmgen_instances SET state = 'z' WHERE id = $1`},
		{"the last entry deleted", `DELETE FROM fsmgen_entries WHERE id = $1 AND seq = 3`},
		{"an entry deleted", `DELETE FROM fsmgen_entries WHERE id = $1 AND seq = 2`},
		{"an entry renumbered", `UPDATE fsmgen_entries SET seq = 9 WHERE id = $1 AND seq = 3`},
		{"the version moved on", `UPDATE fsmgen_instances SET version = 5 WHERE id = $1`},
		{"the version zero", `UPDATE fsmgen_instances SET version = 0 WHERE id = $1`},
		{"the snapshot after the log", `UPDATE fsmgen_instances SET snapshot_seq = 7 WHERE id = $1`},
		{"the last entry's to_state edited", `UPDATE fsmgen_entries SET to_state = 'z' WHERE id = $1 AND seq = 3`},
	} {
		id := string(rune('a' + i))
		mustCommit(t, st, "test.M", id, 1, 3)
		if _, err := conn.Exec(ctx, c.edit, id); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, err := st.Load(ctx, "test.M", id); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: load = %v, want ErrCorrupt", c.name, err)
		}
	}
	if l := mustLoad(t, st, "test.M", "unknown"); l.Version != 0 || l.Entries != nil {
		t.Errorf("an instance never stored loads as %+v", l)
	}
}
