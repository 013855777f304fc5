// Package pgtest runs a throwaway PostgreSQL for tests: initdb and pg_ctl
// in a temporary folder, on a free loopback port, as the postgres user
// when the tests run as root (initdb refuses root). One instance serves a
// whole test binary; each test takes a database of its own.
//
// The binaries are Debian's postgresql package's, in
// /usr/lib/postgresql/15/bin (or $PG_BIN). Absent, Shared is
// testenv.Missing: a skip on a developer's machine, a failure under CI.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/realizar-host/realizar-host/internal/testenv"
)

// defaultBin is where Debian's postgresql-15 keeps initdb and pg_ctl.
const defaultBin = "/usr/lib/postgresql/15/bin"

// Instance is a running PostgreSQL cluster in a temporary folder.
type Instance struct {
	dir  string // holds data/, the socket and log
	bin  string
	port int
	// runAs prefixes commands when the tests run as root.
	runAs []string
	dbSeq atomic.Int64
}

// start initializes a cluster in a new temporary folder and starts it on
// a free loopback port, with durability off (fsync, synchronous_commit):
// it is for tests. Stop removes it.
func start() (*Instance, error) {
	bin := os.Getenv("PG_BIN")
	if bin == "" {
		bin = defaultBin
	}
	if _, err := os.Stat(filepath.Join(bin, "initdb")); err != nil {
		return nil, fmt.Errorf("pgtest: %w (install Debian's postgresql, or set PG_BIN)", err)
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	in := &Instance{dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: running as root needs the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		in.runAs = []string{"runuser", "-u", "postgres", "--"}
	}
	if out, err := in.cmd("initdb", "-D", in.data(), "--auth=trust", "-U", "postgres", "--no-sync", "-E", "UTF8",
		"--no-instructions").CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %w: %s", err, out)
	}
	if in.port, err = freePort(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := in.StartAgain(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return in, nil
}

func (in *Instance) data() string { return filepath.Join(in.dir, "data") }

func (in *Instance) cmd(name string, args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, in.runAs...), filepath.Join(in.bin, name)), args...)
	return exec.Command(argv[0], argv[1:]...)
}

// StartAgain starts the cluster after Stop (or the first time) and waits
// until it accepts connections.
func (in *Instance) StartAgain() error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "+
		"-c full_page_writes=off -c max_connections=100 -c shared_buffers=16MB", in.port, in.dir)
	out, err := in.cmd("pg_ctl", "-D", in.data(), "-l", filepath.Join(in.dir, "log"), "-w", "-t", "30", "-o", opts,
		"start").CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(in.dir, "log"))
		return fmt.Errorf("pgtest: pg_ctl start: %w: %s\n%s", err, out, log)
	}
	return nil
}

// Stop stops the cluster (fast mode: sessions are disconnected) and
// waits until it is down; the data stays for StartAgain.
func (in *Instance) Stop() error {
	out, err := in.cmd("pg_ctl", "-D", in.data(), "-m", "fast", "-w", "stop").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop: %w: %s", err, out)
	}
	return nil
}

// Remove stops the cluster and deletes its folder.
func (in *Instance) remove() error {
	err := in.Stop()
	return errors.Join(err, os.RemoveAll(in.dir))
}

// URL is the connection URL of database db.
func (in *Instance) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", in.port, db)
}

// NewDatabase creates an empty database for t and returns its URL. It is
// dropped when t ends.
func (in *Instance) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), in.dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, in.URL("postgres"))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, in.URL("postgres")); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			_ = c.Close(ctx)
		}
	})
	return in.URL(name)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

var (
	sharedOnce sync.Once
	shared     *Instance
	sharedErr  error
)

// Shared returns the test binary's instance, starting it on first use.
// Without PostgreSQL's binaries it is testenv.Missing; a start that fails
// is t.Fatal. Call StopShared from TestMain after m.Run.
func Shared(t testing.TB) *Instance {
	t.Helper()
	bin := os.Getenv("PG_BIN")
	if bin == "" {
		bin = defaultBin
	}
	if _, err := os.Stat(filepath.Join(bin, "initdb")); err != nil {
		testenv.Missing(t, "PostgreSQL not found in %s: apt-get install postgresql (or set PG_BIN)", bin)
	}
	sharedOnce.Do(func() { shared, sharedErr = start() })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// StopShared removes the shared instance, if one was started.
func StopShared() {
	if shared != nil {
		_ = shared.remove()
	}
}
