package pgstore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// Errors of the tenant administration.
var (
	// ErrTenantExists: a tenant of that name exists already.
	ErrTenantExists = errors.New("pgstore: tenant exists")
	// ErrNoTenant: no tenant of that name.
	ErrNoTenant = errors.New("pgstore: no such tenant")
	// ErrNoKey: the tenant has no key with that sha256.
	ErrNoKey = errors.New("pgstore: no such key")
	// ErrKeyExists: a tenant holds a key with that sha256 already.
	ErrKeyExists = errors.New("pgstore: key exists")
)

// uniqueViolation is PostgreSQL's unique_violation error code.
const uniqueViolation = "23505"

func isUnique(err error, constraint string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == uniqueViolation && (constraint == "" || pe.ConstraintName == constraint)
}

// TenantInfo is one tenant as the administration lists it.
type TenantInfo struct {
	Name string `json:"name"`
	// Limits are as stored: a zero field takes tenancy.DefaultLimits' value.
	Limits tenancy.Limits `json:"limits"`
	// KeySHA256 are the hex sha256 of its keys, oldest first.
	KeySHA256 []string `json:"key_sha256"`
	// Plugins and PluginBytes are what it stores.
	Plugins     int   `json:"plugins"`
	PluginBytes int64 `json:"plugin_bytes"`
}

func checkSpec(name string, l tenancy.Limits) error {
	if !tenancy.ValidTenantName(name) {
		return fmt.Errorf("pgstore: tenant name %q is not 1 to 64 of [a-z0-9_-]", name)
	}
	if err := tenancy.CheckLimits(l); err != nil {
		return fmt.Errorf("pgstore: tenant %s: %w", name, err)
	}
	return nil
}

// normKey checks a key's hex sha256 and returns it as the table stores
// it: 64 lowercase hex digits.
func normKey(keySHA256 string) (string, error) {
	sum, err := tenancy.ParseKeySHA256(keySHA256)
	if err != nil {
		return "", fmt.Errorf("pgstore: %w", err)
	}
	return hex.EncodeToString(sum[:]), nil
}

// AddTenant creates tenant name with limits l and one key (its hex
// sha256). ErrTenantExists for a name taken, ErrKeyExists for a key
// another tenant holds.
func (s *Store) AddTenant(ctx context.Context, name string, l tenancy.Limits, keySHA256 string) error {
	if err := checkSpec(name, l); err != nil {
		return err
	}
	keySHA256, err := normKey(keySHA256)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx pgx.Tx) error { return insertTenant(ctx, tx, name, l, []string{keySHA256}) })
}

func insertTenant(ctx context.Context, tx pgx.Tx, name string, l tenancy.Limits, keys []string) error {
	raw, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "INSERT INTO realizar_tenants (name, limits) VALUES ($1, $2)", name, raw); err != nil {
		if isUnique(err, "") {
			return fmt.Errorf("%w: %s", ErrTenantExists, name)
		}
		return err
	}
	for _, k := range keys {
		if _, err := tx.Exec(ctx, "INSERT INTO realizar_keys (key_sha256, tenant) VALUES ($1, $2)", k, name); err != nil {
			if isUnique(err, "") {
				return fmt.Errorf("%w: tenant %s: key %s", ErrKeyExists, name, k)
			}
			return err
		}
	}
	return nil
}

// AddKey adds a key (its hex sha256) to tenant name: the first half of a
// rotation (RevokeKey is the second).
func (s *Store) AddKey(ctx context.Context, name, keySHA256 string) error {
	keySHA256, err := normKey(keySHA256)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		if err := lockTenant(ctx, tx, name); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "INSERT INTO realizar_keys (key_sha256, tenant) VALUES ($1, $2)", keySHA256, name); err != nil {
			if isUnique(err, "") {
				return fmt.Errorf("%w: %s", ErrKeyExists, keySHA256)
			}
			return err
		}
		return nil
	})
}

// RevokeKey removes tenant name's key whose hex sha256 is keySHA256.
// ErrNoTenant, or ErrNoKey when the tenant has no such key.
func (s *Store) RevokeKey(ctx context.Context, name, keySHA256 string) error {
	keySHA256, err := normKey(keySHA256)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		if err := lockTenant(ctx, tx, name); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, "DELETE FROM realizar_keys WHERE tenant = $1 AND key_sha256 = $2", name, keySHA256)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: tenant %s has no key with sha256 %s", ErrNoKey, name, keySHA256)
		}
		return nil
	})
}

// RemoveTenant deletes tenant name with its keys, plugins and stored
// responses.
func (s *Store) RemoveTenant(ctx context.Context, name string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM realizar_tenants WHERE name = $1", name)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: %s", ErrNoTenant, name)
		}
		return nil
	})
}

// SetLimits replaces tenant name's limits with l (a zero field takes
// tenancy.DefaultLimits' value).
func (s *Store) SetLimits(ctx context.Context, name string, l tenancy.Limits) error {
	if err := checkSpec(name, l); err != nil {
		return err
	}
	raw, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "UPDATE realizar_tenants SET limits = $2 WHERE name = $1", name, raw)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: %s", ErrNoTenant, name)
		}
		return nil
	})
}

// ListTenants returns every tenant, by name.
func (s *Store) ListTenants(ctx context.Context) ([]TenantInfo, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT t.name, t.limits,
			coalesce((SELECT array_agg(k.key_sha256 ORDER BY k.created_at, k.key_sha256) FROM realizar_keys k WHERE k.tenant = t.name), '{}'),
			(SELECT count(*) FROM realizar_plugins p WHERE p.tenant = t.name),
			(SELECT coalesce(sum(p.bytes), 0) FROM realizar_plugins p WHERE p.tenant = t.name)
		FROM realizar_tenants t ORDER BY t.name`)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []TenantInfo
	for rows.Next() {
		var ti TenantInfo
		var raw []byte
		if err := rows.Scan(&ti.Name, &raw, &ti.KeySHA256, &ti.Plugins, &ti.PluginBytes); err != nil {
			return nil, unavailable(err)
		}
		_ = json.Unmarshal(raw, &ti.Limits)
		out = append(out, ti)
	}
	return out, unavailable(rows.Err())
}

// Import adds the tenants of a tenants file (tenancy.TenantsFile, with its
// defaults filled into each tenant's limits), all or none: a name or key
// taken already is ErrTenantExists or ErrKeyExists and adds nothing. It
// returns how many it added.
func (s *Store) Import(ctx context.Context, f *tenancy.TenantsFile) (int, error) {
	specs, err := f.Resolve()
	if err != nil {
		return 0, err
	}
	if _, err := tenancy.NewTenants(specs, nil); err != nil { // names, keys, limits, duplicates in the file
		return 0, err
	}
	err = s.tx(ctx, func(tx pgx.Tx) error {
		for _, sp := range specs {
			if err := insertTenant(ctx, tx, sp.Name, sp.Limits, normalizeKeys(sp.KeySHA256)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return len(specs), nil
}

// normalizeKeys lowercases and trims hex sums, as the table stores them.
func normalizeKeys(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i], _ = normKey(k) // checked by NewTenants
	}
	return out
}

// lockTenant takes tenant name's row for the transaction; ErrNoTenant
// when there is none.
func lockTenant(ctx context.Context, tx pgx.Tx, name string) error {
	var one int
	err := tx.QueryRow(ctx, "SELECT 1 FROM realizar_tenants WHERE name = $1 FOR UPDATE", name).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %s", ErrNoTenant, name)
	}
	return err
}

// tx runs fn in a transaction under OpTimeout, then reloads this Store's
// tenants and plugin index (without waiting for its notification); errors
// other than the administration's own are wrapped as unavailable when the
// database is.
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	opCtx, cancel := s.op(ctx)
	defer cancel()
	err := pgx.BeginFunc(opCtx, s.pool, fn)
	for _, own := range []error{ErrTenantExists, ErrNoTenant, ErrNoKey, ErrKeyExists} {
		if errors.Is(err, own) {
			return err
		}
	}
	if err != nil {
		return unavailable(err)
	}
	return s.resync(ctx, true, true)
}
