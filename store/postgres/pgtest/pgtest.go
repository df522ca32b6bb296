// Package pgtest starts a real, throwaway PostgreSQL server for tests and removes it
// afterwards.
//
// Each server is a fresh cluster made by initdb in its own temporary directory. It listens
// only on 127.0.0.1 at a free port, keeps its unix socket and its log inside that
// directory, and trusts every local connection, so the DSN needs no password. Several
// tests can share one server with a database each (see [Server.CreateDatabase]); other
// processes, such as test workers, connect with the DSN.
//
// The PostgreSQL binaries are looked up on PATH and then in the Debian layout
// /usr/lib/postgresql/<version>/bin. PostgreSQL refuses to run as root, so when the
// test runs as root the server runs as the "postgres" system user, or "nobody".
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Superuser is the name of the superuser of every cluster, the user in every DSN.
const Superuser = "fsmgen"

// Database is the name of the database that [Server.DSN] points at.
const Database = "fsmgen"

// ErrNotInstalled is returned (wrapped) by [Start] when initdb and pg_ctl cannot be found.
var ErrNotInstalled = errors.New("pgtest: PostgreSQL server binaries (initdb, pg_ctl) not found")

// debianBinGlob is where the Debian package "postgresql" installs the server binaries.
const debianBinGlob = "/usr/lib/postgresql/*/bin"

// portAttempts is how many free ports Start tries before giving up.
const portAttempts = 5

// Options configures a server. The zero value is a fast, non-durable server.
type Options struct {
	// Fsync keeps PostgreSQL's durable defaults. When false (the default) the server
	// runs with fsync, synchronous_commit and full_page_writes off, which is much
	// faster and fine for a throwaway cluster; set it for benchmarks that measure
	// durable commits.
	Fsync bool
	// MaxConnections is the server's max_connections; 0 means 100.
	MaxConnections int
	// Settings are more lines of postgresql.conf, name to value, written after the
	// others (so they win) in name order. A value is written as it is: quote a string,
	// as in {"shared_preload_libraries": "'pg_stat_statements'"}. A name must be letters,
	// digits, '_' and '.', and a value one line, or Start fails.
	Settings map[string]string
}

// Server is a running throwaway PostgreSQL server.
type Server struct {
	// DSN is a postgres:// URL for the database "fsmgen" as the superuser, over TCP to
	// 127.0.0.1, usable by pgx and by other processes.
	DSN string
	// Port is the TCP port the server listens on, on 127.0.0.1.
	Port int
	// Dir is the temporary directory that holds the cluster: the data directory
	// "data", the server log "postgres.log" and the unix socket. Stop removes it.
	Dir string

	bins     binaries
	cred     *syscall.Credential
	stopOnce sync.Once
	stopErr  error
}

// binaries are the paths of the PostgreSQL programs used.
type binaries struct {
	initdb, pgCtl string
}

// New starts a server for a test with [Start] and stops it when the test ends. When the
// PostgreSQL binaries are not installed it skips the test, unless the environment
// variable CI is true: CI must never skip these tests, so there it fails the test instead.
func New(tb testing.TB, opts Options) *Server {
	tb.Helper()
	srv, err := Start(context.Background(), opts)
	if errors.Is(err, ErrNotInstalled) {
		notInstalled(tb, err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Stop)
	return srv
}

// notInstalled skips the test because PostgreSQL is not installed, or fails it in CI.
func notInstalled(tb testing.TB, err error) {
	tb.Helper()
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		tb.Fatalf("%v (CI is set, so the test may not be skipped)", err)
	}
	tb.Skipf("skipping: %v; install PostgreSQL (Debian: apt-get install postgresql) to run it", err)
}

// Start creates a cluster in a new temporary directory, starts a server on a free port
// of 127.0.0.1, waits until it accepts connections and creates the database "fsmgen".
// On any error nothing is left running and the directory is removed. When the process
// runs as root the temporary directory (see [os.TempDir]) must be reachable by the
// unprivileged user the server runs as.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bins, err := findBinaries()
	if err != nil {
		return nil, err
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	srv := &Server{Dir: dir, bins: bins, cred: cred}
	if err := srv.setUp(ctx, opts); err != nil {
		srv.Stop()
		return nil, err
	}
	return srv, nil
}

// setUp creates the cluster, starts the server and creates the database "fsmgen".
func (s *Server) setUp(ctx context.Context, opts Options) (err error) {
	if err := s.initdb(ctx); err != nil {
		return err
	}
	if err := s.writeConfig(opts); err != nil {
		return err
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	if err := s.waitReady(ctx); err != nil {
		return err
	}
	s.DSN, err = s.CreateDatabase(ctx, Database)
	return err
}

// Stop stops the server (fast shutdown, else immediate) and removes [Server.Dir]. It is
// safe to call more than once and from several goroutines; only the first call acts.
func (s *Server) Stop() { _ = s.Close() }

// Close is [Server.Stop] reporting what went wrong; later calls return the same error.
func (s *Server) Close() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

// CreateDatabase creates a database in the cluster and returns a DSN for it, so that
// several tests can share one server with a database each.
func (s *Server) CreateDatabase(ctx context.Context, name string) (dsn string, err error) {
	conn, err := pgx.Connect(ctx, s.dsn("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: create database %q: %w", name, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgtest: create database %q: %w", name, err)
	}
	return s.dsn(name), nil
}

// dsn is the URL of database db as the superuser.
func (s *Server) dsn(db string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(Superuser),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)),
		Path:     "/" + db,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

func (s *Server) dataDir() string { return filepath.Join(s.Dir, "data") }
func (s *Server) logFile() string { return filepath.Join(s.Dir, "postgres.log") }

// initdb hands the temporary directory to the server's user and creates the cluster.
func (s *Server) initdb(ctx context.Context) error {
	if err := s.own(s.Dir); err != nil {
		return err
	}
	if err := os.Mkdir(s.dataDir(), 0o700); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if err := s.own(s.dataDir()); err != nil {
		return err
	}
	_, err := s.run(ctx, s.bins.initdb, "-D", s.dataDir(), "-U", Superuser, "-A", "trust",
		"-E", "UTF8", "--no-locale", "--no-sync")
	return err
}

// own gives path to the server's user, when the server runs as another user.
func (s *Server) own(path string) error {
	if err := os.Chmod(path, 0o700); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if s.cred == nil {
		return nil
	}
	if err := os.Chown(path, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return nil
}

// writeConfig appends the settings that do not change between start attempts to the
// cluster's postgresql.conf. The port is given on the command line.
func (s *Server) writeConfig(opts Options) error {
	maxConns := opts.MaxConnections
	if maxConns <= 0 {
		maxConns = 100
	}
	conf := fmt.Sprintf("\n# pgtest\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = %s\nmax_connections = %d\n",
		quoteConf(s.Dir), maxConns)
	if !opts.Fsync {
		conf += "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
	}
	settings, err := settingLines(opts.Settings)
	if err != nil {
		return err
	}
	conf += settings
	f, err := os.OpenFile(filepath.Join(s.dataDir(), "postgresql.conf"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	_, err = f.WriteString(conf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return nil
}

// quoteConf quotes a string value for postgresql.conf.
func quoteConf(v string) string {
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}

// start starts the server on a free port, trying another port when the chosen one was
// taken in the meantime.
func (s *Server) start(ctx context.Context) error {
	var err error
	for range portAttempts {
		if s.Port, err = freePort(); err != nil {
			return err
		}
		_ = os.Remove(s.logFile()) // so the log tail is about this attempt only
		_, err = s.run(ctx, s.bins.pgCtl, "start", "-w", "-t", "60", "-D", s.dataDir(),
			"-l", s.logFile(), "-o", "-p "+strconv.Itoa(s.Port))
		if err == nil {
			return nil
		}
		tail := s.logTail()
		err = fmt.Errorf("%w\nserver log (%s):\n%s", err, s.logFile(), tail)
		if !strings.Contains(tail, "already in use") {
			return err
		}
	}
	return err
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// logTail returns the end of the server log.
func (s *Server) logTail() string {
	const limit = 4 << 10
	b, err := os.ReadFile(s.logFile())
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	if len(b) > limit {
		b = b[len(b)-limit:]
	}
	return string(b)
}

// waitReady waits until the server accepts a connection, for a few seconds.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, s.dsn("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgtest: server does not accept connections: %w\nserver log:\n%s", err, s.logTail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop stops the server if it runs and removes the directory.
func (s *Server) stop() error {
	if s.Dir == "" {
		return nil
	}
	var errs []error
	if _, err := os.Stat(filepath.Join(s.dataDir(), "postmaster.pid")); err == nil {
		errs = append(errs, s.shutdown())
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		errs = append(errs, fmt.Errorf("pgtest: %w", err))
	}
	return errors.Join(errs...)
}

// shutdown stops the running server: a fast shutdown, else an immediate one, else it
// kills the postmaster.
func (s *Server) shutdown() error {
	// Not the caller's context: a cancelled Start must still stop its server.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, errFast := s.run(ctx, s.bins.pgCtl, "stop", "-D", s.dataDir(), "-m", "fast", "-w", "-t", "30")
	if errFast == nil {
		return nil
	}
	_, errImm := s.run(ctx, s.bins.pgCtl, "stop", "-D", s.dataDir(), "-m", "immediate", "-w", "-t", "30")
	if errImm == nil {
		return nil
	}
	if pid, err := s.postmasterPID(); err == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return fmt.Errorf("pgtest: stop server: %w", errors.Join(errFast, errImm))
}

// postmasterPID reads the postmaster's process id from its pid file.
func (s *Server) postmasterPID() (int, error) {
	b, err := os.ReadFile(filepath.Join(s.dataDir(), "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err == nil && pid <= 0 {
		err = fmt.Errorf("bad pid %d", pid)
	}
	return pid, err
}

// run runs a PostgreSQL program as the server's user in the cluster's directory with a
// minimal environment, and returns its combined output; a failure's error includes it.
func (s *Server) run(ctx context.Context, prog string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = s.Dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + s.Dir,
		"LC_ALL=C",
		"LANG=C",
		"TZ=UTC",
	}
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("pgtest: %s %s: %w\n%s",
			filepath.Base(prog), strings.Join(args, " "), err, bytes.TrimSpace(out.Bytes()))
	}
	return out.Bytes(), nil
}

// serverCredential returns the user to run PostgreSQL as when the process runs as root:
// the "postgres" system user if it exists, else "nobody". It returns nil otherwise: the
// server then runs as the current user.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var errs []error
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err := errors.Join(err1, err2); err != nil {
			errs = append(errs, fmt.Errorf("user %s: %w", name, err))
			continue
		}
		if uid == 0 {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("pgtest: running as root and no unprivileged user to run PostgreSQL as: %w", errors.Join(errs...))
}

// findBinaries finds initdb and pg_ctl: on PATH, else in the directory of the highest
// PostgreSQL version in the Debian layout.
func findBinaries() (binaries, error) {
	initdb, err1 := exec.LookPath("initdb")
	pgCtl, err2 := exec.LookPath("pg_ctl")
	if err1 == nil && err2 == nil {
		return binaries{initdb: initdb, pgCtl: pgCtl}, nil
	}
	dirs, _ := filepath.Glob(debianBinGlob)
	var best string
	var bestVersion []int
	for _, dir := range dirs {
		v, ok := parseVersion(filepath.Base(filepath.Dir(dir)))
		if !ok || !isExecutable(filepath.Join(dir, "initdb")) || !isExecutable(filepath.Join(dir, "pg_ctl")) {
			continue
		}
		if best == "" || versionLess(bestVersion, v) {
			best, bestVersion = dir, v
		}
	}
	if best == "" {
		return binaries{}, fmt.Errorf("%w on PATH or in %s", ErrNotInstalled, debianBinGlob)
	}
	return binaries{initdb: filepath.Join(best, "initdb"), pgCtl: filepath.Join(best, "pg_ctl")}, nil
}

// parseVersion parses a version such as "15" or "9.6".
func parseVersion(s string) ([]int, bool) {
	var v []int
	for _, part := range strings.Split(s, ".") {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			return nil, false
		}
		v = append(v, n)
	}
	return v, true
}

// versionLess reports whether version a is lower than version b.
func versionLess(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// isExecutable reports whether path is a regular file with an execute bit.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// settingLines returns the lines of postgresql.conf that set settings, in name order.
func settingLines(settings map[string]string) (string, error) {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(settings)) {
		value := settings[name]
		if name == "" || strings.TrimFunc(name, func(r rune) bool {
			return r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		}) != "" {
			return "", fmt.Errorf("pgtest: setting name %q: only letters, digits, '_' and '.'", name)
		}
		if strings.ContainsAny(value, "\r\n") {
			return "", fmt.Errorf("pgtest: setting %s: the value %q is more than one line", name, value)
		}
		fmt.Fprintf(&b, "%s = %s\n", name, value)
	}
	return b.String(), nil
}
