//! A stand-in AWS endpoint on 127.0.0.1: answers every request with one canned response and
//! records the request bodies, for what moto cannot show (the session tags an `AssumeRole`
//! carries) or cannot be made to do (refuse, throttle).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use tokio::task::JoinHandle;

/// A running stub, stopped when dropped.
pub struct StubEndpoint {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    bodies: Arc<Mutex<Vec<String>>>,
    server: JoinHandle<()>,
}

impl StubEndpoint {
    /// Serves `body` (of `content_type`) with `status` to every request.
    pub async fn start(status: u16, content_type: &'static str, body: String) -> Self {
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let recorded = bodies.clone();
        let status = StatusCode::from_u16(status).expect("status code");
        let app = Router::new().fallback(move |request: String| {
            let recorded = recorded.clone();
            let body = body.clone();
            async move {
                recorded.lock().expect("not poisoned").push(request);
                (status, [(header::CONTENT_TYPE, content_type)], body).into_response()
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding the stub");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("serving the stub");
        });
        Self {
            url,
            bodies,
            server,
        }
    }

    /// An STS endpoint whose `AssumeRole` always succeeds (with keys moto accepts).
    pub async fn sts_assuming_any_role() -> Self {
        let answer = r#"<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <Credentials>
      <AccessKeyId>ASIASTUB</AccessKeyId>
      <SecretAccessKey>stub-secret</SecretAccessKey>
      <SessionToken>stub-token</SessionToken>
      <Expiration>2099-01-01T00:00:00Z</Expiration>
    </Credentials>
    <AssumedRoleUser>
      <AssumedRoleId>AROASTUB:external-secrets-provider-aws</AssumedRoleId>
      <Arn>arn:aws:sts::123456789012:assumed-role/stub/external-secrets-provider-aws</Arn>
    </AssumedRoleUser>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>stub</RequestId></ResponseMetadata>
</AssumeRoleResponse>"#;
        Self::start(200, "text/xml", answer.to_owned()).await
    }

    /// An STS endpoint answering every call with the error `code` and `status`.
    pub async fn sts_failing(status: u16, code: &str, message: &str) -> Self {
        let answer = format!(
            "<ErrorResponse><Error><Type>Sender</Type><Code>{code}</Code>\
             <Message>{message}</Message></Error><RequestId>stub</RequestId></ErrorResponse>"
        );
        Self::start(status, "text/xml", answer).await
    }

    /// A JSON-protocol endpoint (Secrets Manager, SSM) answering every call with the error
    /// `code` and `status`.
    pub async fn json_failing(status: u16, code: &str, message: &str) -> Self {
        let answer = serde_json::json!({"__type": code, "message": message}).to_string();
        Self::start(status, "application/x-amz-json-1.1", answer).await
    }

    /// The form fields of every request so far (AWS query protocol bodies), oldest first.
    pub fn forms(&self) -> Vec<BTreeMap<String, String>> {
        let bodies = self.bodies.lock().expect("not poisoned");
        bodies.iter().map(|body| form(body)).collect()
    }
}

impl Drop for StubEndpoint {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The fields of an `application/x-www-form-urlencoded` body.
fn form(body: &str) -> BTreeMap<String, String> {
    body.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(key, value)| (decode(key), decode(value)))
        .collect()
}

/// Percent-decodes `text` (`+` is a space).
fn decode(text: &str) -> String {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        match (first, tail) {
            (b'%', [high, low, remaining @ ..]) => {
                let hex = std::str::from_utf8(&[*high, *low])
                    .ok()
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok());
                match hex {
                    Some(byte) => {
                        bytes.push(byte);
                        rest = remaining;
                        continue;
                    }
                    None => bytes.push(b'%'),
                }
            }
            (b'+', _) => bytes.push(b' '),
            (other, _) => bytes.push(other),
        }
        rest = tail;
    }
    String::from_utf8_lossy(&bytes).into_owned()
}
