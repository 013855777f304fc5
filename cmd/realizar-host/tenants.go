package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/realizar-host/realizar-host/internal/server/pgstore"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// storeEnv names the environment variable that gives --store's default.
const storeEnv = "REALIZAR_STORE"

// storeURL is --store, or $REALIZAR_STORE when the flag is empty.
func storeURL(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(storeEnv)
}

func newTenantsCmd() *cobra.Command {
	var url string
	cmd := &cobra.Command{
		Use:   "tenants",
		Short: "Manage the tenants of a PostgreSQL store (serve --store)",
		Long: "Add, list, change and remove the tenants of the store that serve --store URL reads.\n" +
			"Each command applies pending schema migrations first. A new API key is printed alone on one\n" +
			"line of stdout (everything else goes to stderr); only its sha256 is stored.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringVar(&url, "store", "", "the store: a postgres:// URL (default $"+storeEnv+")")
	open := func(cmd *cobra.Command) (*pgstore.Store, error) {
		u := storeURL(url)
		if u == "" {
			return nil, usage(errors.New("tenants needs --store postgres://... or $" + storeEnv))
		}
		st, err := pgstore.Open(cmd.Context(), u, pgstore.Options{Logger: slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))})
		if err != nil {
			return nil, failure(err)
		}
		return st, nil
	}
	with := func(fn func(cmd *cobra.Command, st *pgstore.Store, args []string) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			st, err := open(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			return fn(cmd, st, args)
		}
	}

	var addLimits string
	add := &cobra.Command{
		Use:   "add NAME [--limits JSON]",
		Short: "Create a tenant and print its new API key",
		Args:  cobra.ExactArgs(1),
		RunE: with(func(cmd *cobra.Command, st *pgstore.Store, args []string) error {
			l, err := parseLimits(addLimits)
			if err != nil {
				return err
			}
			key, err := newKey()
			if err != nil {
				return failure(err)
			}
			if err := st.AddTenant(cmd.Context(), args[0], l, tenancy.HashKey(key)); err != nil {
				return adminErr(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "tenant %s added; its key's sha256 is %s\n", args[0], tenancy.HashKey(key))
			fmt.Fprintln(cmd.OutOrStdout(), key)
			return nil
		}),
	}
	add.Flags().StringVar(&addLimits, "limits", "", `the tenant's limits as JSON, e.g. {"max_concurrent": 4} (default: the server's defaults)`)

	var asJSON bool
	list := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the tenants: keys (sha256), limits and stored plugins",
		Args:  cobra.NoArgs,
		RunE: with(func(cmd *cobra.Command, st *pgstore.Store, _ []string) error {
			ts, err := st.ListTenants(cmd.Context())
			if err != nil {
				return failure(err)
			}
			if asJSON {
				if ts == nil {
					ts = []pgstore.TenantInfo{}
				}
				return encodeJSON(cmd, ts)
			}
			w := cmd.OutOrStdout()
			for _, t := range ts {
				lim, _ := json.Marshal(t.Limits)
				fmt.Fprintf(w, "%s\tkeys %d\tplugins %d (%d bytes)\tlimits %s\n", t.Name, len(t.KeySHA256), t.Plugins,
					t.PluginBytes, nonZero(lim))
				for _, k := range t.KeySHA256 {
					fmt.Fprintf(w, "\tkey_sha256 %s\n", k)
				}
			}
			return nil
		}),
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	remove := &cobra.Command{
		Use:   "remove NAME",
		Short: "Delete a tenant with its keys, plugins and stored responses",
		Args:  cobra.ExactArgs(1),
		RunE: with(func(cmd *cobra.Command, st *pgstore.Store, args []string) error {
			if err := st.RemoveTenant(cmd.Context(), args[0]); err != nil {
				return adminErr(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "tenant %s removed\n", args[0])
			return nil
		}),
	}
	rotate := &cobra.Command{
		Use:   "rotate NAME",
		Short: "Add a new API key to a tenant and print it (revoke the old one once clients have moved)",
		Args:  cobra.ExactArgs(1),
		RunE: with(func(cmd *cobra.Command, st *pgstore.Store, args []string) error {
			key, err := newKey()
			if err != nil {
				return failure(err)
			}
			if err := st.AddKey(cmd.Context(), args[0], tenancy.HashKey(key)); err != nil {
				return adminErr(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "tenant %s has a new key; its sha256 is %s\n", args[0], tenancy.HashKey(key))
			fmt.Fprintln(cmd.OutOrStdout(), key)
			return nil
		}),
	}
	revoke := &cobra.Command{
		Use:   "revoke NAME KEY_SHA256",
		Short: "Remove one of a tenant's keys, named by its sha256 (tenants list shows them)",
		Args:  cobra.ExactArgs(2),
		RunE: with(func(cmd *cobra.Command, st *pgstore.Store, args []string) error {
			if err := st.RevokeKey(cmd.Context(), args[0], args[1]); err != nil {
				return adminErr(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "tenant %s: key %s revoked\n", args[0], args[1])
			return nil
		}),
	}
	limits := &cobra.Command{
		Use:   "limits NAME JSON",
		Short: "Replace a tenant's limits (fields left out take the server's defaults)",
		Args:  cobra.ExactArgs(2),
		RunE: with(func(cmd *cobra.Command, st *pgstore.Store, args []string) error {
			l, err := parseLimits(args[1])
			if err != nil {
				return err
			}
			if err := st.SetLimits(cmd.Context(), args[0], l); err != nil {
				return adminErr(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "tenant %s: limits set\n", args[0])
			return nil
		}),
	}
	imp := &cobra.Command{
		Use:   "import TENANTS.json",
		Short: "Add the tenants of a tenants file (serve --tenants's format), all or none",
		Args:  cobra.ExactArgs(1),
		RunE: with(func(cmd *cobra.Command, st *pgstore.Store, args []string) error {
			b, err := os.ReadFile(args[0])
			if err != nil {
				return badFile(err)
			}
			var f tenancy.TenantsFile
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&f); err != nil {
				return badFile(fmt.Errorf("%s: %w: %w", args[0], tenancy.ErrTenants, err))
			}
			n, err := st.Import(cmd.Context(), &f)
			if errors.Is(err, tenancy.ErrTenants) {
				return badFile(fmt.Errorf("%s: %w", args[0], err))
			}
			if err != nil {
				return adminErr(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%d tenants imported\n", n)
			return nil
		}),
	}
	cmd.AddCommand(add, list, remove, rotate, revoke, limits, imp)
	return cmd
}

// newKey is a new API key: "rzk_" and 43 characters of [A-Za-z0-9_-]
// (256 random bits, base64url).
func newKey() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "rzk_" + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// parseLimits reads a Limits object; unknown fields and values out of
// range are usage errors. Empty is the zero Limits (the defaults).
func parseLimits(s string) (tenancy.Limits, error) {
	var l tenancy.Limits
	if strings.TrimSpace(s) == "" {
		return l, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return l, usage(fmt.Errorf("limits: %w", err))
	}
	if err := tenancy.CheckLimits(l); err != nil {
		return l, usage(fmt.Errorf("limits: %w", err))
	}
	return l, nil
}

// adminErr marks an administration error: a name, key or tenant that is
// wrong is a usage error, anything else (the database) a failure.
func adminErr(err error) error {
	for _, e := range []error{pgstore.ErrTenantExists, pgstore.ErrNoTenant, pgstore.ErrNoKey, pgstore.ErrKeyExists} {
		if errors.Is(err, e) {
			return failure(err)
		}
	}
	if errors.Is(err, tenancy.ErrUnavailable) {
		return failure(err)
	}
	return usage(err)
}

// nonZero is a limits object without its zero fields.
func nonZero(raw []byte) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	for k, v := range m {
		if v == float64(0) || v == "0s" {
			delete(m, k)
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// openStore opens the serve store at url with the server's logger; its
// removals release compiled code through onRemoved.
func openStore(ctx context.Context, url string, log *slog.Logger, onRemoved func(tenant, sum string)) (*pgstore.Store, error) {
	return pgstore.Open(ctx, url, pgstore.Options{Logger: log, OnRemoved: onRemoved})
}
