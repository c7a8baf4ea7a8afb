//! Command-line interface: one subcommand per job the binary can do, so the same
//! image runs the controller, the webhook and the tooling around them.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Top-level arguments of the `external-secrets` binary.
#[derive(Debug, Parser)]
#[command(name = "external-secrets", version, about)]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The jobs the binary can run.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print every CustomResourceDefinition this build serves, as multi-document YAML,
    /// so clusters and the Helm chart install exactly the schema the types define.
    Crds {
        /// Write one file per CRD into this directory (upstream's file names) instead of
        /// printing to standard output.
        #[arg(long)]
        out_dir: Option<PathBuf>,
    },
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
