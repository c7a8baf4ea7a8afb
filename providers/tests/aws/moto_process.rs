//! Starting moto's server (`moto_server`, a local AWS API) on 127.0.0.1, with the standard
//! library only, so both the provider tests and the e2e tests (which include this file by path)
//! can use it.
//!
//! `moto_server` is found through `MOTO_SERVER_BIN` or `PATH` (`scripts/test.sh` puts the test
//! venv on `PATH`; `bash scripts/test-tools.sh` installs it); a missing binary fails the test
//! with a message saying so. moto accepts any credentials, keeps its data in memory per account
//! and region, and switches accounts when a role of another account is assumed.
//!
//! The server runs under a small `sh` supervisor that reads its stdin, a pipe held by the test
//! process, and kills the server when that pipe closes: when [`MotoProcess`] is dropped, or when
//! the test process exits however it exits (servers kept in statics are never dropped).

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the server may take to start serving.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A running moto server, stopped when dropped.
pub struct MotoProcess {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    port: u16,
    log: PathBuf,
    supervisor: Child,
}

impl MotoProcess {
    /// Starts a server and waits until `GET /moto-api/` answers 200 (well under a second).
    pub fn start() -> MotoProcess {
        let binary = moto_binary();
        let port = free_port();
        let log = std::env::temp_dir().join(format!("eso-moto-{}-{port}.log", std::process::id()));
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
            .arg(&log)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawning sh to supervise moto_server");
        let mut server = MotoProcess {
            url: format!("http://127.0.0.1:{port}"),
            port,
            log,
            supervisor,
        };
        let started = Instant::now();
        loop {
            if server
                .request("GET", "/moto-api/", "", "")
                .is_some_and(|(status, _)| status == 200)
            {
                return server;
            }
            if let Ok(Some(status)) = server.supervisor.try_wait() {
                panic!("moto_server exited ({status}): {}", server.log_tail());
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "moto_server did not start serving at {}: {}",
                server.url,
                server.log_tail()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The end of the server's log, for failure messages.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let start = text.len().saturating_sub(2000);
        String::from_utf8_lossy(&text.as_bytes()[start..]).into_owned()
    }

    /// The body of `GET path` (e.g. `/moto-api/data.json`, everything the server holds, as
    /// JSON); panics unless the server answers 200.
    pub fn get(&self, path: &str) -> String {
        match self.request("GET", path, "", "") {
            Some((200, body)) => body,
            other => panic!("GET {path} from moto: {other:?}: {}", self.log_tail()),
        }
    }

    /// Calls `action` of an AWS JSON API (`service` as it signs, e.g. `secretsmanager` with
    /// target prefix `secretsmanager`, or `ssm` with `AmazonSSM`) in the default account, for
    /// tests that seed or inspect data without an SDK: the status and the JSON answer.
    pub fn call(&self, service: &str, target: &str, body: &str) -> (u16, String) {
        // moto reads the service and region from the credential scope; it checks no signature.
        let headers = format!(
            "X-Amz-Target: {target}\r\nContent-Type: application/x-amz-json-1.1\r\n\
             Authorization: AWS4-HMAC-SHA256 Credential=AKIDTEST/20260101/eu-west-1/{service}/\
             aws4_request, SignedHeaders=host, Signature=0\r\n"
        );
        self.request("POST", "/", &headers, body)
            .unwrap_or_else(|| panic!("moto did not answer {target}: {}", self.log_tail()))
    }

    /// Sends a `method` request for `path` with `headers` (each line ending in CRLF) and `body`
    /// (HTTP/1.0: the answer is never chunked): the status and body, `None` if the server does
    /// not answer.
    fn request(
        &self,
        method: &str,
        path: &str,
        headers: &str,
        body: &str,
    ) -> Option<(u16, String)> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        // Generous: moto loads a service's backend on its first call, slowly on a busy machine.
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .ok()?;
        let request = format!(
            "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n{headers}Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).ok()?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).ok()?;
        let answer = String::from_utf8_lossy(&answer);
        let (head, body) = answer.split_once("\r\n\r\n")?;
        let status = head.split_whitespace().nth(1)?.parse().ok()?;
        Some((status, body.to_owned()))
    }
}

impl Drop for MotoProcess {
    fn drop(&mut self) {
        // Closing the supervisor's stdin makes it kill the server.
        drop(self.supervisor.stdin.take());
        let _ = self.supervisor.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// `moto_server` from `MOTO_SERVER_BIN` or `PATH`.
fn moto_binary() -> PathBuf {
    let configured = std::env::var_os("MOTO_SERVER_BIN")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .map(|directory| directory.join("moto_server"))
                .find(|candidate| candidate.is_file())
        });
    configured.unwrap_or_else(|| {
        panic!(
            "these tests need moto's server `moto_server`: set MOTO_SERVER_BIN or put it on PATH \
             (`bash scripts/test-tools.sh` installs it and prints the directory; \
             scripts/test.sh does both)"
        )
    })
}

/// A port that was free a moment ago.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binding a port");
    listener.local_addr().expect("local address").port()
}
