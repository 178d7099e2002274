"""The tables of a log file. Statistics filter and group on real columns (game, type, seat, actor),
so those sit next to the JSON payload instead of inside it."""

from __future__ import annotations

import pyarrow as pa

__all__ = [
    "ANNOTATIONS_DDL",
    "DDL",
    "EVENT_COLUMNS",
    "EVENT_ROWS",
    "FIGURE_ROWS",
    "MATCH_COLUMNS",
    "MATCH_ROWS",
    "SCHEMA_VERSION",
    "SEAT_COLUMNS",
    "SEAT_ROWS",
    "TREE_DDL",
    "TREE_NODE_ROWS",
]

#: 2: the Merkle tree over the log (events.leaf, tree_nodes) and its signed checkpoints. A log of
#: version 1 is brought to 2 the first time it is opened for writing (its tree built once); matchlog
#: before version 2 refuses a log of version 2, because it would append events without leaves.
#: 3: the annotations beside the events (`annotations`), which take leaves of the same tree. A log
#: of version 2 gets the (empty) table the first time it is opened for writing; matchlog before
#: version 3 refuses a log of version 3, because it would give its events leaves annotations hold.
SCHEMA_VERSION = "3"

# The rows of each table as the writer hands them to DuckDB (ids as text, cast in SQL).
EVENT_ROWS = pa.schema(
    [
        ("match_id", pa.string()),
        ("seq", pa.int64()),
        ("event_id", pa.string()),
        ("recorded_at", pa.timestamp("us")),
        ("actor", pa.int16()),
        ("game", pa.string()),
        ("type", pa.string()),
        ("version", pa.int16()),
        ("seat", pa.int16()),
        ("payload", pa.string()),
        ("hash", pa.binary()),
        ("leaf", pa.int64()),
    ]
)
MATCH_ROWS = pa.schema(
    [
        ("match_id", pa.string()),
        ("game", pa.string()),
        ("status", pa.string()),
        ("created_at", pa.timestamp("us")),
        ("ended_at", pa.timestamp("us")),
        ("players", pa.list_(pa.string())),
        ("strategies", pa.list_(pa.string())),
        ("options", pa.string()),
        ("last_seq", pa.int64()),
        ("head_hash", pa.binary()),
        ("ended_seq", pa.int64()),
        ("result", pa.string()),
        ("winners", pa.list_(pa.int16())),
        ("origin_match", pa.string()),
        ("origin_seq", pa.int64()),
        ("series_id", pa.string()),
        ("series_game", pa.int32()),
    ]
)
SEAT_ROWS = pa.schema(
    [
        ("match_id", pa.string()),
        ("seat", pa.int16()),
        ("name", pa.string()),
        ("player", pa.string()),
        ("place", pa.int16()),
        ("score", pa.float64()),
        ("winner", pa.bool_()),
        ("removed", pa.bool_()),
    ]
)


FIGURE_ROWS = pa.schema(
    [
        ("match_id", pa.string()),
        ("seat", pa.int16()),
        ("figure", pa.string()),
        ("value", pa.float64()),
    ]
)


TREE_NODE_ROWS = pa.schema([("level", pa.int16()), ("idx", pa.int64()), ("hash", pa.binary())])


EVENT_COLUMNS = tuple(EVENT_ROWS.names)
MATCH_COLUMNS = tuple(MATCH_ROWS.names)
SEAT_COLUMNS = tuple(SEAT_ROWS.names)

TREE_DDL = """
-- The Merkle tree over the log (RFC 9162; proofs/tree.py, docs/proofs.md): leaf i is the i-th event
-- the log committed (events.leaf = i), and a leaf is the event's chain hash.
-- The hash of every complete subtree of 2^level leaves, level 8, 16, 24, ... (a row per 256 leaves
-- in all), from leaf idx * 2^level: what a proof needs besides the leaves of its own 256.
CREATE TABLE IF NOT EXISTS tree_nodes (
    level SMALLINT NOT NULL,
    idx   BIGINT   NOT NULL,
    hash  BLOB     NOT NULL
);
-- Every checkpoint the log signed (a C2SP signed note of its tree's size and root), oldest first.
CREATE TABLE IF NOT EXISTS checkpoints (
    size      BIGINT    NOT NULL,
    root      BLOB      NOT NULL,
    signed_at TIMESTAMP NOT NULL,
    note      VARCHAR   NOT NULL
);
"""

ANNOTATIONS_DDL = """
-- Annotations (store/annotations.py): analyses, comments and rulings about recorded events, in a
-- stream of their own beside the log. Rows are only ever inserted. Each match's annotations are
-- numbered 0, 1, 2, ... and hash-chained like its events; each is a leaf of the same Merkle tree.
CREATE TABLE IF NOT EXISTS annotations (
    match_id      UUID      NOT NULL,
    number        BIGINT    NOT NULL,  -- its place in the match's annotations
    annotation_id UUID      NOT NULL,
    recorded_at   TIMESTAMP NOT NULL,  -- UTC, microseconds
    seq           BIGINT    NOT NULL,  -- the event it speaks of...
    event_hash    BLOB      NOT NULL,  -- ...and that event's chain hash
    author        VARCHAR   NOT NULL,  -- an analyser and its version, or whose token wrote it
    seat          SMALLINT,            -- the seat whose view it belongs to; NULL: every reader's
    type          VARCHAR   NOT NULL,  -- the note's tag (events/annotations.py)
    payload       VARCHAR   NOT NULL,  -- the note's canonical JSON
    hash          BLOB      NOT NULL,  -- see store/annotations.py
    leaf          BIGINT    NOT NULL   -- its leaf in the Merkle tree
);
"""

DDL = f"""
CREATE TABLE IF NOT EXISTS meta (
    key VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);
INSERT OR IGNORE INTO meta VALUES ('schema_version', '{SCHEMA_VERSION}');

-- The log. Rows are only ever inserted. (match_id, seq) is unique, but not by an index: the one
-- writer of the file checks every expected_seq against the heads it holds, and an index on it
-- would cost more than half of each insert (DuckDB never uses it for reads; they prune by min/max).
CREATE TABLE IF NOT EXISTS events (
    match_id    UUID      NOT NULL,
    seq         BIGINT    NOT NULL,
    event_id    UUID      NOT NULL,
    recorded_at TIMESTAMP NOT NULL,  -- UTC, microseconds
    actor       SMALLINT,            -- the seat whose answer this is; NULL = the referee
    game        VARCHAR   NOT NULL,
    type        VARCHAR   NOT NULL,  -- the event's tag
    version     SMALLINT  NOT NULL,  -- the event's schema version
    seat        SMALLINT,            -- the seat the event is about, if any
    payload     VARCHAR   NOT NULL,  -- the canonical JSON of the event
    hash        BLOB      NOT NULL,  -- see store/chain.py
    leaf        BIGINT               -- its leaf in the Merkle tree: the order the log committed it
);

-- The catalogue: one row per match, derived from the log (the writer keeps it; see writer.py).
CREATE TABLE IF NOT EXISTS matches (
    match_id     UUID PRIMARY KEY,
    game         VARCHAR   NOT NULL,
    status       VARCHAR   NOT NULL,  -- running | finished | abandoned
    created_at   TIMESTAMP NOT NULL,
    ended_at     TIMESTAMP,
    players      VARCHAR[] NOT NULL,  -- seat names, by seat
    strategies   VARCHAR[] NOT NULL,  -- the player (strategy) at each seat
    options      VARCHAR   NOT NULL,  -- JSON
    last_seq     BIGINT    NOT NULL,
    head_hash    BLOB      NOT NULL,
    ended_seq    BIGINT,
    result       VARCHAR,             -- JSON of the outcome
    winners      SMALLINT[],
    origin_match UUID,
    origin_seq   BIGINT,
    series_id    VARCHAR,
    series_game  INTEGER
);

-- Projection: one row per seat of every match, its outcome filled in when the match ends.
CREATE TABLE IF NOT EXISTS seats (
    match_id UUID     NOT NULL,
    seat     SMALLINT NOT NULL,
    name     VARCHAR  NOT NULL,
    player   VARCHAR  NOT NULL,
    place    SMALLINT,
    score    DOUBLE,
    winner   BOOLEAN,
    removed  BOOLEAN,
    PRIMARY KEY (match_id, seat)
);

-- Projection: the figures statistics need from each ended match (see engines/figures.py), one
-- row per match (seat NULL) or seat and figure; `projected` says which matches, at which head,
-- under which version of the figures. Rebuilt from the log whenever they are missing or stale.
CREATE TABLE IF NOT EXISTS figures (
    match_id UUID     NOT NULL,
    seat     SMALLINT,
    figure   VARCHAR  NOT NULL,
    value    DOUBLE   NOT NULL
);
CREATE TABLE IF NOT EXISTS projected (
    match_id UUID    PRIMARY KEY,
    last_seq BIGINT  NOT NULL,
    version  INTEGER NOT NULL
);

{TREE_DDL}
{ANNOTATIONS_DDL}
-- Views for SQL users (`matchlog sql`), documented in docs/log.md.
CREATE OR REPLACE VIEW match_results AS
SELECT m.match_id, m.game, m.status, m.created_at, m.ended_at,
       epoch(m.ended_at) - epoch(m.created_at) AS seconds,
       TRY_CAST(m.last_seq::HUGEINT + 1 AS BIGINT) AS events, t.turns,
       m.result ->> '$.result' AS result, m.players, m.strategies, m.winners, m.series_id
FROM matches m
LEFT JOIN (SELECT match_id, sum(value) AS turns FROM figures WHERE seat IS NULL AND figure = 'turns'
           GROUP BY match_id) t USING (match_id);

CREATE OR REPLACE VIEW seat_results AS
SELECT s.match_id, m.game, m.status, m.created_at, s.seat, s.name, s.player, s.place, s.score, s.winner,
       s.removed, f.answers, f.rejected
FROM seats s JOIN matches m USING (match_id)
LEFT JOIN (SELECT match_id, seat, coalesce(sum(value) FILTER (WHERE figure = 'answers'), 0) AS answers,
                  coalesce(sum(value) FILTER (WHERE figure = 'rejected'), 0) AS rejected
           FROM figures WHERE seat IS NOT NULL GROUP BY ALL) f USING (match_id, seat);

CREATE OR REPLACE VIEW dice_faces AS
SELECT f.match_id, f.seat, s.name, s.player, CAST(substr(f.figure, 5) AS INTEGER) AS face, f.value::BIGINT AS count
FROM figures f JOIN seats s USING (match_id, seat)
WHERE starts_with(f.figure, 'die_');

CREATE OR REPLACE VIEW rulings AS
SELECT match_id, seq, recorded_at, game, type, seat, payload ->> '$.code' AS code,
       payload ->> '$.decision' AS decision, payload ->> '$.answer' AS answer,
       coalesce(payload ->> '$.message', payload ->> '$.reason') AS message
FROM events WHERE type IN ('match.answer_rejected', 'match.player_removed');

-- A cache of folded states; dropping it loses nothing. `digest` ties a state to the log: the
-- SHA-256 of the hash of the event it was folded to, the engine key and the state (store/chain.py).
-- A snapshot whose digest does not match is dropped, never used. (A log from before the digest
-- has its cache dropped when it is opened for writing.)
CREATE TABLE IF NOT EXISTS snapshots (
    match_id UUID    NOT NULL,
    seq      BIGINT  NOT NULL,
    engine   VARCHAR NOT NULL,
    state    BLOB    NOT NULL,
    digest   BLOB    NOT NULL,
    PRIMARY KEY (match_id, seq, engine)
);
"""
