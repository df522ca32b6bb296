package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// updateEffectError records an effect's last error, unless it was delivered.
const updateEffectError = `UPDATE fsmgen_effects SET last_error = ?, failed_at = ?
	WHERE machine = ? AND id = ? AND seq = ? AND idx = ? AND delivered_at IS NULL`

var _ fsmrt.EffectErrorRecorder = (*Store)(nil)

// RecordEffectError records err (at most fsmrt.MaxEffectError bytes of it) as the last
// error of effect id, failed at at, unless it was delivered (fsmrt.EffectErrorRecorder).
func (s *Store) RecordEffectError(ctx context.Context, id fsmrt.EffectID, err string, at time.Time) error {
	e := s.writeTx(ctx, true, func(t *tx) error {
		_, err := t.ExecContext(ctx, updateEffectError, fsmrt.EffectErrorText(err), at.UnixMicro(), id.Machine, id.ID, id.Seq, id.Index)
		return err
	})
	if e != nil {
		return fmt.Errorf("sqlite store: error of effect %s %.64q %d #%d: %w", id.Machine, id.ID, id.Seq, id.Index, e)
	}
	return nil
}
