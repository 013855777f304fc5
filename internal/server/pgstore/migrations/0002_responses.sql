-- Stored responses (POST /v1/responses with store), each in its tenant's
-- namespace: every query names the tenant. The retention bounds are the
-- binary's (tenancy.ResponsesPerTenant, tenancy.ResponseTTL), passed to
-- each statement: a store trims its tenant's expired and oldest rows in
-- its own transaction, and each replica deletes every expired row at
-- each resync. No trigger notifies: no replica caches responses.
CREATE TABLE realizar_responses (
    tenant       text NOT NULL REFERENCES realizar_tenants (name) ON DELETE CASCADE,
    id           text NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
    seq          bigint GENERATED ALWAYS AS IDENTITY,
    response     json NOT NULL,
    conversation json NOT NULL,
    bytes        integer NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, id)
);
CREATE INDEX realizar_responses_order ON realizar_responses (tenant, seq);
CREATE INDEX realizar_responses_age ON realizar_responses (created_at);
