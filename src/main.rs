//! Entry point of the `external-secrets` binary: parse the command line and dispatch.

mod allocator;
mod caches;
mod certcontroller;
mod cli;
mod context;
mod controllers;
mod event_queue;
mod event_series;
mod generators;
mod http_serve;
mod kube_client;
mod labels;
use external_secrets_leader as leader;
mod metrics;
mod metrics_auth;
mod render;
mod run;
mod secure_metrics;
mod server;
mod stores;
mod webhook;

use anyhow::Context;
use clap::Parser;
use cli::{Cli, Command};
use std::io::Write;

fn main() -> anyhow::Result<()> {
    allocator::configure();
    match Cli::parse().into_command() {
        Command::Crds { out_dir } => print_crds(out_dir.as_deref()),
        Command::Render { file } => {
            let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
            let mut out = std::io::stdout().lock();
            let mut notes = std::io::stderr().lock();
            let all_synced = runtime.block_on(render::render(&file, &mut out, &mut notes))?;
            out.flush()?;
            if !all_synced {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Run(args) => {
            run::init_tracing(&args.loglevel);
            tokio::runtime::Runtime::new()
                .context("starting the async runtime")?
                .block_on(run::run(args))
        }
        Command::Webhook(args) => {
            run::init_tracing(&args.probes.loglevel);
            tokio::runtime::Runtime::new()
                .context("starting the async runtime")?
                .block_on(webhook::run(args))
        }
        Command::Certcontroller(args) => {
            run::init_tracing(&args.probes.loglevel);
            tokio::runtime::Runtime::new()
                .context("starting the async runtime")?
                .block_on(certcontroller::run(args))
        }
    }
}

/// Emits the CRD manifests generated from the Rust types, to stdout or into a directory.
fn print_crds(out_dir: Option<&std::path::Path>) -> anyhow::Result<()> {
    let manifests = external_secrets_crds::manifests();
    match out_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            for (file_name, yaml) in manifests {
                let path = dir.join(file_name);
                std::fs::write(&path, yaml)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            for (_, yaml) in manifests {
                writeln!(stdout, "---")?;
                stdout.write_all(yaml.as_bytes())?;
            }
        }
    }
    Ok(())
}
