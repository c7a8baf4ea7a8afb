//! Starting cloudbox's Secret Manager emulator on 127.0.0.1 through this project's launcher
//! (`cloudbox_launcher.py` beside this file, which works around cloudbox 0.2.3's defects; its
//! doc lists them), with the standard library only so the e2e tests can include this file by
//! path too.
//!
//! The launcher runs on the Python of the venv holding cloudbox: `CLOUDBOX_PYTHON`, else the
//! `python` beside a `cloudbox` executable on `PATH` (`bash scripts/test-tools.sh` installs
//! cloudbox and prints that directory). A missing interpreter fails the test saying so. The
//! server runs under an `sh` supervisor that kills it when its stdin (a pipe held by the test
//! process) closes, so it also stops when the test process exits.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the emulator may take to start serving (imports are slow on a busy machine).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The launcher's source, written to a temporary file at start.
const LAUNCHER: &str = include_str!("cloudbox_launcher.py");

/// A running emulator, stopped when dropped.
pub struct CloudboxProcess {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    log: PathBuf,
    script: PathBuf,
    supervisor: Child,
}

impl CloudboxProcess {
    /// Starts the emulator and waits until its port accepts connections.
    pub fn start() -> CloudboxProcess {
        let python = python();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("finding a free port")
            .port();
        let stem = format!("eso-cloudbox-{}-{port}", std::process::id());
        let script = std::env::temp_dir().join(format!("{stem}.py"));
        let log = std::env::temp_dir().join(format!("{stem}.log"));
        std::fs::write(&script, LAUNCHER).expect("writing the cloudbox launcher");
        let supervise = r#""$1" "$2" "$3" </dev/null >"$4" 2>&1 &
child=$!
read -r _
kill "$child"
wait "$child""#;
        let supervisor = Command::new("sh")
            .args(["-c", supervise, "sh"])
            .arg(&python)
            .arg(&script)
            .arg(port.to_string())
            .arg(&log)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawning sh to supervise cloudbox");
        let mut server = CloudboxProcess {
            url: format!("http://127.0.0.1:{port}"),
            log,
            script,
            supervisor,
        };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.supervisor.try_wait() {
                panic!("cloudbox exited ({status}): {}", server.log_tail());
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "cloudbox did not start serving at {}: {}",
                server.url,
                server.log_tail()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    /// Sends `method path` with a JSON `body` (empty: none) over HTTP/1.0 (never chunked), for
    /// tests that seed or inspect data: the status and the body; panics if nothing answers.
    pub fn call(&self, method: &str, path: &str, body: &str) -> (u16, String) {
        let address = self.url.trim_start_matches("http://");
        let answer = (|| -> std::io::Result<String> {
            let mut stream = TcpStream::connect(address)?;
            stream.set_read_timeout(Some(Duration::from_secs(30)))?;
            let request = format!(
                "{method} {path} HTTP/1.0\r\nHost: {address}\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\n\r\n{body}",
                body.len()
            );
            stream.write_all(request.as_bytes())?;
            let mut answer = Vec::new();
            stream.read_to_end(&mut answer)?;
            Ok(String::from_utf8_lossy(&answer).into_owned())
        })()
        .unwrap_or_else(|error| panic!("cloudbox did not answer {method} {path}: {error}"));
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|status| status.parse().ok())
            .unwrap_or(0);
        (status, body.to_owned())
    }

    /// The emulator's log, for failure messages.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read(&self.log).unwrap_or_default();
        let start = text.len().saturating_sub(2000);
        String::from_utf8_lossy(&text[start..]).into_owned()
    }
}

impl Drop for CloudboxProcess {
    fn drop(&mut self) {
        drop(self.supervisor.stdin.take());
        let _ = self.supervisor.wait();
        let _ = std::fs::remove_file(&self.log);
        let _ = std::fs::remove_file(&self.script);
    }
}

/// The venv's Python that has cloudbox.
fn python() -> PathBuf {
    std::env::var_os("CLOUDBOX_PYTHON")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .find(|directory| directory.join("cloudbox").is_file())
                .map(|directory| directory.join("python"))
        })
        .unwrap_or_else(|| {
            panic!(
                "these tests need cloudbox (PyPI 0.2.3): set CLOUDBOX_PYTHON to the venv's python \
                 or put the venv's bin on PATH (`bash scripts/test-tools.sh` installs it and \
                 prints the directory; scripts/test.sh does both)"
            )
        })
}
