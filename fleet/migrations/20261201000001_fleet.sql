-- deepr fleet mode, schema 1: runs and what they leave behind, shared by every worker.
-- The queue itself is pgmq's (installed by `deepr db migrate` from the SQL the pgmq
-- crate embeds); one message per run, whose visibility timeout is the worker's lease.

CREATE TABLE deepr_runs (
    run_id      TEXT PRIMARY KEY,
    -- The run record (deepr.run.v1), as `deepr run` validated it. No secrets.
    record      JSONB NOT NULL,
    -- queued | running | finished | incomplete | failed | parked
    state       TEXT NOT NULL,
    note        TEXT,
    -- The pgmq message that carries the run (a message with another id is stale).
    msg_id      BIGINT,
    -- The claim that may write: one more at every claim, and every checkpoint write
    -- checks it in the same transaction (late writes of a worker whose lease expired
    -- are refused).
    lease_epoch INTEGER NOT NULL DEFAULT 0,
    worker      TEXT,
    -- The holder's lease, seconds (a heartbeat older than this: the worker is gone).
    lease_secs  INTEGER NOT NULL DEFAULT 30,
    attempts    INTEGER NOT NULL DEFAULT 0,
    -- Claims of the current message that ended with the worker stopping cleanly: not
    -- failures, so parking does not count them.
    graceful_releases INTEGER NOT NULL DEFAULT 0,
    submitted   DOUBLE PRECISION NOT NULL,
    claimed     DOUBLE PRECISION,
    heartbeat   DOUBLE PRECISION,
    updated     DOUBLE PRECISION NOT NULL,
    -- The reports (markdown, its JSON sidecar, any other formats by extension).
    reports     JSONB NOT NULL DEFAULT '{}'::jsonb
);

CREATE TABLE deepr_nodes (
    run_id  TEXT NOT NULL REFERENCES deepr_runs(run_id) ON DELETE CASCADE,
    node_id TEXT NOT NULL,
    -- The done marker: the node key the record was computed under.
    node_key TEXT NOT NULL,
    record  JSONB NOT NULL,
    PRIMARY KEY (run_id, node_id)
);

CREATE TABLE deepr_meta (
    run_id TEXT NOT NULL REFERENCES deepr_runs(run_id) ON DELETE CASCADE,
    name   TEXT NOT NULL,
    value  JSONB NOT NULL,
    PRIMARY KEY (run_id, name)
);

-- Model answers by request hash, shared by every run on every worker.
CREATE TABLE deepr_llm_cache (
    request_key TEXT PRIMARY KEY,
    answer      JSONB NOT NULL
);

-- Every model call of every run, as it completes (what a run spent, across sessions
-- and machines).
CREATE TABLE deepr_calls (
    id      BIGSERIAL PRIMARY KEY,
    run_id  TEXT NOT NULL REFERENCES deepr_runs(run_id) ON DELETE CASCADE,
    worker  TEXT NOT NULL,
    entry   JSONB NOT NULL
);
CREATE INDEX deepr_calls_run ON deepr_calls (run_id);

-- Rate limits every worker shares: a GCRA per key (provider|base URL|model|requests or
-- tokens). `tat` is the theoretical arrival time of the next unit; `paused_until` holds a
-- Retry-After for everyone. Times are the database's clock, seconds since the epoch.
CREATE TABLE deepr_rate (
    key          TEXT PRIMARY KEY,
    tat          DOUBLE PRECISION NOT NULL DEFAULT 0,
    paused_until DOUBLE PRECISION NOT NULL DEFAULT 0
);

-- Archived texts by SHA-256, written through by every worker's archive before the step
-- that names them is checkpointed, so a run resumed elsewhere finds them.
CREATE TABLE deepr_archive (
    content_sha256 TEXT PRIMARY KEY,
    text           TEXT NOT NULL
);

-- Research memory: a summary of every finished run (topic, date, key claims), which
-- `deepr runs search --db` searches.
CREATE TABLE deepr_memory (
    run_id TEXT PRIMARY KEY REFERENCES deepr_runs(run_id) ON DELETE CASCADE,
    memory JSONB NOT NULL
);
