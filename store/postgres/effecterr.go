package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// sqlEffectError records an effect's last error, unless it was delivered.
const sqlEffectError = `UPDATE {schema}.fsmgen_effects SET last_error = $1::text, failed_at = $2::timestamptz
WHERE machine = $3::text AND id = $4::text AND seq = $5::bigint AND idx = $6::int AND delivered_at IS NULL`

var _ fsmrt.EffectErrorRecorder = (*Store)(nil)

// RecordEffectError records err (at most fsmrt.MaxEffectError bytes of it) as the last
// error of effect id, failed at at, unless it was delivered, in one statement
// (fsmrt.EffectErrorRecorder).
func (s *Store) RecordEffectError(ctx context.Context, id fsmrt.EffectID, err string, at time.Time) error {
	if _, e := s.pool.Exec(ctx, s.index.effectError, fsmrt.EffectErrorText(err), at, id.Machine, id.ID, id.Seq, id.Index); e != nil {
		return fmt.Errorf("postgres store: error of effect %s %.64q %d #%d: %w", id.Machine, id.ID, id.Seq, id.Index, e)
	}
	return nil
}
