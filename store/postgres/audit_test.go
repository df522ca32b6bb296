package postgres

import (
	"context"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/internal/audittest"
)

// TestAudit: rows of the PostgreSQL database edited behind the store's back (Find's and
// the timers'), each found by fsmrt.Audit, which finds nothing in the database as the
// machine wrote it; a deadline moved earlier is not fired by the timers, though Find
// believes it.
func TestAudit(t *testing.T) {
	open := func(t *testing.T) (fsmrt.Store, func(ctx context.Context, sql string) error) {
		dsn := newDatabase(t)
		st, conn := openStore(t, dsn), connect(t, dsn)
		return st, func(ctx context.Context, sql string) error {
			_, err := conn.Exec(ctx, sql)
			return err
		}
	}
	audittest.Run(t, open, []audittest.Case{
		{Name: "as written"},
		{Name: "a counter", Edit: `UPDATE fsmgen_counters SET value = 2 WHERE id = 'T'`, Want: `counter "failures" in "planning" is 2, the log says 1`},
		{Name: "a counter deleted", Edit: `DELETE FROM fsmgen_counters WHERE id = 'T'`, Want: `counter "failures" in "planning" is 0, the log says 1`},
		{Name: "a counter added", Edit: `INSERT INTO fsmgen_counters (machine, id, name, state, value) VALUES ('build.Task', 'T', 'cto_attempts', '', 1)`,
			Want: `counter "cto_attempts" is 1, the log says 0`},
		{Name: "a deadline moved", Edit: `UPDATE fsmgen_deadlines SET at = at - interval '1 hour' WHERE id = 'T' AND name = 'level:escalate'`, Want: `deadline level:escalate falls due at`},
		{Name: "a deadline deleted", Edit: `DELETE FROM fsmgen_deadlines WHERE id = 'T' AND name = 'level:warn'`, Want: `deadline level:warn is missing`},
		{Name: "the last entry's time", Edit: `UPDATE fsmgen_instances SET last_at = last_at + interval '5 seconds' WHERE id = 'T'`, Want: `its last entry was at`},
		{Name: "the state", Edit: `UPDATE fsmgen_instances SET state = 'done' WHERE id = 'T'`, Want: `instance in state "done", its last entry 4 entered "planning"`, Is: ErrCorrupt},
	}, `UPDATE fsmgen_deadlines SET at = at - interval '1 day' WHERE id = 'T' AND name = 'level:warn'`)
}
