//! Provider trait and backends.
