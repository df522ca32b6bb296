package postgres

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Wake-ups (fsmrt.Waker). A commit that arms deadlines, or writes effects that nobody
// holds (a transition committed in the caller's transaction), sends a NOTIFY on channel
// wakeChannel in its own transaction, so that PostgreSQL delivers it only if the
// transaction commits, to every process listening, this one included. The payload is the
// store's quoted schema name, a dot and the machine's name. A Store with watches keeps one
// connection of its own (not the pool's) LISTENing; when that connection is lost it wakes
// every watch (what was committed meanwhile went unheard), and connects again with a
// growing pause (reconnectMin to reconnectMax); meanwhile the Waiters poll at their
// interval. Effects a commit leases to its committer (who delivers them at once) notify
// nobody: the end of their lease is what NextWork reports.

// wakeChannel is the channel of the NOTIFYs of every store of a database.
const wakeChannel = "fsmgen_work"

// The pauses of the listening connection between attempts to connect, and the longest it
// waits for a notification before it checks that its connection is alive.
const (
	reconnectMin = 50 * time.Millisecond
	reconnectMax = 2 * time.Second
	listenPing   = 30 * time.Second
)

const (
	// sqlNotify wakes the listeners of machine $1 (payload $3) when this transaction
	// wrote instance ($1, $2) and commits.
	// (The VALUES name $1 and $2 in a commit in the caller's transaction too, where the
	// condition is left out.)
	sqlNotify = `SELECT pg_notify('` + wakeChannel + `', $3::text) FROM (VALUES ($1::text, $2::text)) AS w(machine, id)
WHERE ` + sqlWritten

	// sqlNextWork reads the earliest time at which a claim of machine $1 may find work: a
	// deadline not handled falls due, or its lease runs out (claims take a lease that ran
	// out before their now: a microsecond after its end), or an effect not delivered is
	// free (its commit's time) or its lease runs out. A deadline's time is never before
	// its at, so the deadlines after the first free one (in the order of the claims'
	// index) cannot be earlier than it: only those up to it are read, not every deadline
	// of the machine.
	sqlNextWork = `WITH free AS (
	SELECT at FROM {schema}.fsmgen_deadlines
	WHERE machine = $1::text AND handled_at IS NULL AND (leased_until IS NULL OR leased_until < at)
	ORDER BY at LIMIT 1
)
SELECT least(
	(SELECT min(CASE WHEN leased_until IS NULL OR leased_until < at THEN at
		ELSE leased_until + interval '1 microsecond' END)
	FROM {schema}.fsmgen_deadlines WHERE machine = $1::text AND handled_at IS NULL
		AND at <= COALESCE((SELECT at FROM free), 'infinity')),
	(SELECT min(CASE WHEN leased_until IS NULL THEN committed_at
		ELSE leased_until + interval '1 microsecond' END)
	FROM {schema}.fsmgen_effects WHERE machine = $1::text AND delivered_at IS NULL))`
)

// waker is the listening side of a Store: its watches and the connection that hears the
// NOTIFYs for them. The copies of a Store (WithTx) share it.
type waker struct {
	hub    fsmrt.WorkHub
	prefix string // the payload's schema part: quoted schema name and a dot
	// ping is how long the connection waits for a notification before it checks that it
	// is alive, and how long that check may take (listenPing; a test shortens it).
	ping time.Duration

	mu      sync.Mutex
	watches int
	stop    context.CancelFunc // the listener's, while it runs
	done    chan struct{}
	// listening is whether the connection LISTENs now.
	listening bool
	// Connects counts the connections the listener made.
	connects int
}

var _ fsmrt.Waker = (*Store)(nil)

// queueNotify queues the NOTIFY of commit c, if it wakes anyone.
func (s *Store) queueNotify(b *pgx.Batch, c *fsmrt.Commit) {
	if fsmrt.CommitWakes(c) {
		b.Queue(s.sql.notify, c.Machine, c.ID, s.sql.wakePrefix+c.Machine)
	}
}

// WatchWork returns a watch on the work of machine (fsmrt.Waker): a commit in any process
// that arms deadlines of machine or writes effects of it nobody holds wakes it, once
// committed; so does a lost listening connection. The store listens while it has
// watches, on a connection of its own.
func (s *Store) WatchWork(machine string) fsmrt.WorkWatch {
	w := s.wake
	watch := w.hub.Watch(machine)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watches++
	if w.stop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		w.stop, w.done = cancel, make(chan struct{})
		go w.listen(ctx, s.pool.Config().ConnConfig, w.done)
	}
	return &pgWatch{WorkWatch: watch, w: w}
}

// NextWork returns when a claim of machine may next find work (fsmrt.Waker), in one
// statement.
func (s *Store) NextWork(ctx context.Context, machine string) (time.Time, bool, error) {
	var at *time.Time
	if err := s.pool.QueryRow(ctx, s.sql.nextWork, machine).Scan(&at); err != nil {
		return time.Time{}, false, failed("next work", machine, "", err)
	}
	if at == nil {
		return time.Time{}, false, nil
	}
	return *at, true, nil
}

// Listening reports whether the store's listening connection LISTENs now, and how many
// connections it has made.
func (s *Store) Listening() (bool, int) {
	s.wake.mu.Lock()
	defer s.wake.mu.Unlock()
	return s.wake.listening, s.wake.connects
}

// pgWatch is a watch of the store: closing the last stops the listener.
type pgWatch struct {
	fsmrt.WorkWatch
	w    *waker
	once sync.Once
}

func (p *pgWatch) Close() {
	p.once.Do(func() {
		p.WorkWatch.Close()
		p.w.release()
	})
}

// release forgets a watch, stopping the listener with the last.
func (w *waker) release() {
	w.mu.Lock()
	w.watches--
	var stop context.CancelFunc
	var done chan struct{}
	if w.watches == 0 {
		stop, done = w.stop, w.done
		w.stop, w.done = nil, nil
	}
	w.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// close stops the listener, when the store closes.
func (w *waker) close() {
	w.mu.Lock()
	stop, done := w.stop, w.done
	w.stop, w.done = nil, nil
	w.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// setListening records whether the connection listens.
func (w *waker) setListening(on bool) {
	w.mu.Lock()
	w.listening = on
	if on {
		w.connects++
	}
	w.mu.Unlock()
}

// listen keeps a connection LISTENing until ctx ends, waking the watches of the machines
// notified, and every watch whenever it (re)connects: what was committed while it did not
// listen went unheard.
func (w *waker) listen(ctx context.Context, cfg *pgx.ConnConfig, done chan struct{}) {
	defer close(done)
	pause := reconnectMin
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
		if err == nil {
			if _, err = conn.Exec(ctx, "LISTEN "+wakeChannel); err != nil {
				_ = conn.Close(context.Background())
			}
		}
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(pause):
			}
			pause = min(2*pause, reconnectMax)
			continue
		}
		pause = reconnectMin
		w.setListening(true)
		w.hub.NotifyAll()
		w.serve(ctx, conn)
		w.setListening(false)
		w.hub.NotifyAll()
		_ = conn.Close(context.Background())
	}
}

// serve hands the notifications conn receives to the watches, until the connection fails
// or ctx ends. Every listenPing without one it checks that the connection is alive.
func (w *waker) serve(ctx context.Context, conn *pgx.Conn) {
	for {
		wait, cancel := context.WithTimeout(ctx, w.ping)
		n, err := conn.WaitForNotification(wait)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
			ping, cancel := context.WithTimeout(ctx, w.ping)
			err = conn.Ping(ping)
			cancel()
			if err != nil {
				return
			}
			continue
		case err != nil:
			return
		}
		if machine, ok := strings.CutPrefix(n.Payload, w.prefix); ok {
			w.hub.Notify(machine)
		}
	}
}
