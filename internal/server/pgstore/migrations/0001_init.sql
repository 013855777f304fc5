-- Tenants, their API keys' hashes and their plugins. Every change notifies
-- channel realizar_changes with the table's name, so that each replica
-- reloads what changed.
CREATE TABLE realizar_tenants (
    name       text PRIMARY KEY CHECK (name ~ '^[a-z0-9_-]{1,64}$'),
    limits     jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE realizar_keys (
    key_sha256 text PRIMARY KEY CHECK (key_sha256 ~ '^[0-9a-f]{64}$'),
    tenant     text NOT NULL REFERENCES realizar_tenants (name) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX realizar_keys_tenant ON realizar_keys (tenant);

CREATE TABLE realizar_plugins (
    tenant     text NOT NULL REFERENCES realizar_tenants (name) ON DELETE CASCADE,
    sha256     text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    wasm       bytea NOT NULL,
    bytes      integer NOT NULL,
    meta       jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, sha256)
);

CREATE FUNCTION realizar_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('realizar_changes', TG_TABLE_NAME);
    RETURN NULL;
END
$$;

CREATE TRIGGER realizar_tenants_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON realizar_tenants
    FOR EACH STATEMENT EXECUTE FUNCTION realizar_notify();
CREATE TRIGGER realizar_keys_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON realizar_keys
    FOR EACH STATEMENT EXECUTE FUNCTION realizar_notify();
CREATE TRIGGER realizar_plugins_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON realizar_plugins
    FOR EACH STATEMENT EXECUTE FUNCTION realizar_notify();
