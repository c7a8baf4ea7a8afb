//! `loopback-apiserver`: runs the loopback Kubernetes API server as its own process, writing
//! a kubeconfig for clients, until interrupted.

use clap::Parser;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

/// A loopback Kubernetes API server for tests.
#[derive(Debug, Parser)]
#[command(name = "loopback-apiserver", version)]
struct Cli {
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    bind: IpAddr,
    /// Serve HTTPS with a generated certificate instead of plain HTTP.
    #[arg(long)]
    tls: bool,
    /// Bearer token clients must present (no authentication when unset).
    #[arg(long)]
    token: Option<String>,
    /// Where to write the kubeconfig.
    #[arg(long)]
    kubeconfig: PathBuf,
    /// Watch events kept per resource.
    #[arg(long, default_value_t = 50_000)]
    watch_history: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let options = loopback_apiserver::Options {
        address: SocketAddr::new(cli.bind, cli.port),
        tls: cli.tls,
        token: cli.token,
        kubeconfig: Some(cli.kubeconfig),
        watch_history: cli.watch_history,
        ..loopback_apiserver::Options::default()
    };
    let server = loopback_apiserver::LoopbackServer::start(options).await?;
    println!("{}", server.base_url());
    tokio::signal::ctrl_c().await?;
    server.shutdown();
    Ok(())
}
