//! A TCP proxy that cuts the road to a server on command: it forwards raw bytes between its
//! clients and one upstream `host:port` (so TLS passes through untouched and certificates are
//! the server's own), and [`CutProxy::cut`] closes every open connection, long-lived watches
//! included, then resets every new one until the cut is over, as an API server whose endpoint
//! went away looks to its clients. Not a fake of any API: the server behind it is real.
//!
//! The chaos test points the controller's kubeconfig at it to cut the Kubernetes API endpoint
//! on any cluster, where the API server itself cannot be restarted from a test.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The latest cut: until when new connections are refused. Every change of it (a new cut)
/// closes the connections open at that moment.
#[derive(Debug, Clone, Copy, Default)]
struct Cut {
    until: Option<Instant>,
}

impl Cut {
    fn active(&self) -> bool {
        self.until.is_some_and(|until| Instant::now() < until)
    }
}

/// What the proxy did so far.
#[derive(Debug, Default)]
struct Counts {
    forwarded: AtomicUsize,
    refused: AtomicUsize,
    closed: AtomicUsize,
}

/// A running proxy; dropping it stops it and closes every connection.
pub struct CutProxy {
    /// The address it listens on (127.0.0.1, a free port).
    pub address: SocketAddr,
    cut: watch::Sender<Cut>,
    counts: Arc<Counts>,
    task: JoinHandle<()>,
}

impl CutProxy {
    /// Starts forwarding to `upstream` (`host:port`, resolved for each connection).
    pub async fn start(upstream: impl Into<String>) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let (cut, receiver) = watch::channel(Cut::default());
        let counts = Arc::new(Counts::default());
        let task = tokio::spawn(accept(
            listener,
            Arc::from(upstream.into()),
            receiver,
            counts.clone(),
        ));
        Ok(Self {
            address,
            cut,
            counts,
            task,
        })
    }

    /// Cuts the endpoint now for `duration`: every open connection is reset, and connections
    /// opened before `duration` has passed are reset as soon as they are accepted. Returns at
    /// once; forwarding resumes by itself.
    pub fn cut(&self, duration: Duration) {
        self.cut.send_replace(Cut {
            until: Some(Instant::now() + duration),
        });
    }

    /// Connections forwarded to the upstream server so far.
    pub fn connections(&self) -> usize {
        self.counts.forwarded.load(Ordering::Relaxed)
    }

    /// Connections reset at accept because a cut was on.
    pub fn refused(&self) -> usize {
        self.counts.refused.load(Ordering::Relaxed)
    }

    /// Forwarded connections a cut closed while they were open.
    pub fn closed(&self) -> usize {
        self.counts.closed.load(Ordering::Relaxed)
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        // The listener closes with the accept loop; each open connection sees the cut sender
        // (dropped with `self`) gone and closes.
        self.task.abort();
    }
}

async fn accept(
    listener: TcpListener,
    upstream: Arc<str>,
    mut cut: watch::Receiver<Cut>,
    counts: Arc<Counts>,
) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        // Marks the current cut seen, so the connection's clone only wakes for later ones.
        let active = cut.borrow_and_update().active();
        if active {
            counts.refused.fetch_add(1, Ordering::Relaxed);
            reset(&client);
            continue;
        }
        counts.forwarded.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(relay(client, upstream.clone(), cut.clone(), counts.clone()));
    }
}

/// Copies bytes both ways until either side closes, or resets both when a cut comes.
async fn relay(
    mut client: TcpStream,
    upstream: Arc<str>,
    mut cut: watch::Receiver<Cut>,
    counts: Arc<Counts>,
) {
    let forward = async {
        let mut server = TcpStream::connect(&*upstream).await?;
        let copied = tokio::io::copy_bidirectional(&mut client, &mut server).await;
        Ok::<_, std::io::Error>((server, copied))
    };
    let cut_off = tokio::select! {
        _ = forward => false,
        // A new cut, or the proxy gone (the sender dropped).
        _ = cut.changed() => true,
    };
    if cut_off {
        counts.closed.fetch_add(1, Ordering::Relaxed);
        reset(&client);
    }
}

/// Closing with a zero linger sends RST, as a peer that went away does.
fn reset(stream: &TcpStream) {
    let _ = stream.set_zero_linger();
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// An upstream that answers every chunk it reads with `echo <chunk>`.
    async fn echo_server() -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buffer = [0u8; 64];
                    while let Ok(read @ 1..) = stream.read(&mut buffer).await {
                        let mut answer = b"echo ".to_vec();
                        answer.extend_from_slice(&buffer[..read]);
                        if stream.write_all(&answer).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        address
    }

    async fn ask(stream: &mut TcpStream, what: &str) -> std::io::Result<String> {
        stream.write_all(what.as_bytes()).await?;
        let mut buffer = [0u8; 64];
        let read = stream.read(&mut buffer).await?;
        Ok(String::from_utf8_lossy(&buffer[..read]).into_owned())
    }

    /// `stream` ends (reset, or end of stream) without carrying anything more.
    async fn assert_ends(stream: &mut TcpStream, why: &str) {
        let mut rest = Vec::new();
        let ended = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest))
            .await
            .expect(why);
        assert!(ended.is_err() || rest.is_empty(), "{ended:?} {rest:?}");
    }

    /// A proxy to an echo server, and a connection through it that was answered.
    async fn proxy_with_a_connection() -> (CutProxy, TcpStream) {
        let proxy = CutProxy::start(echo_server().await.to_string())
            .await
            .unwrap();
        let mut open = TcpStream::connect(proxy.address).await.unwrap();
        assert_eq!(ask(&mut open, "one").await.unwrap(), "echo one");
        (proxy, open)
    }

    #[tokio::test]
    async fn forwards_bytes_and_a_cut_closes_open_connections_and_refuses_new_ones() {
        let (proxy, mut open) = proxy_with_a_connection().await;
        assert_eq!(proxy.connections(), 1);

        // Long enough for the steps below to run during it on a loaded machine.
        let cut = Duration::from_secs(3);
        let cut_at = Instant::now();
        proxy.cut(cut);
        assert_ends(&mut open, "the cut closes the open connection").await;
        assert_eq!(proxy.closed(), 1);

        // New connections during the cut are accepted by the kernel, then reset unanswered.
        let mut during = TcpStream::connect(proxy.address).await.unwrap();
        let answer = ask(&mut during, "two").await;
        assert!(
            answer.as_ref().is_err() || answer.as_ref().is_ok_and(String::is_empty),
            "{answer:?}"
        );
        assert_eq!(proxy.refused(), 1);
        assert_eq!(proxy.connections(), 1, "nothing forwarded during the cut");

        tokio::time::sleep_until((cut_at + cut + Duration::from_millis(100)).into()).await;
        let mut after = TcpStream::connect(proxy.address).await.unwrap();
        assert_eq!(ask(&mut after, "three").await.unwrap(), "echo three");
        assert_eq!(proxy.connections(), 2);
        assert_eq!(
            proxy.closed(),
            1,
            "connections opened after the cut stay open"
        );
    }

    #[tokio::test]
    async fn dropping_the_proxy_closes_its_connections() {
        let (proxy, mut open) = proxy_with_a_connection().await;
        drop(proxy);
        assert_ends(&mut open, "dropping the proxy closes the connection").await;
    }
}
