//! The external-secrets.io API types.
