//! [`AsyncIpcClient`]: the client for tokio, with any number of calls in
//! flight on one connection, matched to their answers by id.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};

use super::error::{ClientError, RemoteError};
use super::exchange::{
    argv_request, checked, closed, env_endpoint, frame, hello, hello_answer, into_result, payload,
    raw_request, typed, typed_request, unprompted_argv_outcome,
};
use crate::ipc::argv::ArgvOutcome;
use crate::ipc::command::IpcCommand;
use crate::ipc::endpoint::Endpoint;
use crate::ipc::protocol::{self, Request, Response};
use crate::sync::LockUnpoisoned;

type Pending = HashMap<u64, oneshot::Sender<Result<Response, ClientError>>>;

/// An async client on one connection, with any number of calls in flight;
/// answers are matched to calls by id. Cloning shares the connection. A
/// call given up on (its future dropped) leaves the connection usable:
/// frames go out whole from a writer task, and the late answer is dropped.
#[derive(Clone)]
pub struct AsyncIpcClient {
    inner: Arc<AsyncInner>,
}

struct AsyncInner {
    outbox: mpsc::Sender<Vec<u8>>,
    pending: Arc<Mutex<Option<Pending>>>,
    next_id: AtomicU64,
    max_frame: usize,
    tasks: [tokio::task::AbortHandle; 2],
}

impl Drop for AsyncInner {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl fmt::Debug for AsyncIpcClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncIpcClient")
            .field("max_frame", &self.inner.max_frame)
            .finish_non_exhaustive()
    }
}

/// Removes a call's waiter when the call is given up on.
struct PendingGuard<'a> {
    id: u64,
    pending: &'a Mutex<Option<Pending>>,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if let Some(pending) = self.pending.lock_unpoisoned().as_mut() {
            pending.remove(&self.id);
        }
    }
}

impl AsyncIpcClient {
    /// Connects to `endpoint` (`unix:/path` or `tcp:host:port`) and presents
    /// the token.
    ///
    /// # Errors
    ///
    /// As [`IpcClient::connect`](super::IpcClient::connect).
    pub async fn connect(endpoint: &str, token: &str) -> Result<AsyncIpcClient, ClientError> {
        let endpoint: Endpoint = endpoint.parse().map_err(ClientError::BadEndpoint)?;
        AsyncIpcClient::connect_to(&endpoint, token).await
    }

    /// Connects to the host named by `GANGWAY_ENDPOINT`, with
    /// `GANGWAY_TOKEN`.
    ///
    /// # Errors
    ///
    /// [`ClientError::MissingEnv`], then as [`connect`](AsyncIpcClient::connect).
    pub async fn from_env() -> Result<AsyncIpcClient, ClientError> {
        let (endpoint, token) = env_endpoint()?;
        AsyncIpcClient::connect_to(&endpoint, &token).await
    }

    /// Connects to a parsed endpoint and presents the token.
    ///
    /// # Errors
    ///
    /// As [`IpcClient::connect`](super::IpcClient::connect).
    pub async fn connect_to(
        endpoint: &Endpoint,
        token: &str,
    ) -> Result<AsyncIpcClient, ClientError> {
        let failed = |source| ClientError::Connect {
            endpoint: endpoint.to_string(),
            source,
        };
        type Reader = Box<dyn tokio::io::AsyncRead + Unpin + Send>;
        type Writer = Box<dyn tokio::io::AsyncWrite + Unpin + Send>;
        let (mut reader, mut writer): (Reader, Writer) = match endpoint {
            Endpoint::Unix(path) => {
                let (read, write) = tokio::net::UnixStream::connect(path)
                    .await
                    .map_err(failed)?
                    .into_split();
                (Box::new(read), Box::new(write))
            }
            Endpoint::Tcp(addr) => {
                let stream = tokio::net::TcpStream::connect(addr).await.map_err(failed)?;
                let _ = stream.set_nodelay(true);
                let (read, write) = stream.into_split();
                (Box::new(read), Box::new(write))
            }
        };
        let sent = protocol::write_frame_async(&mut writer, &hello(token)).await;
        let read = protocol::read_frame_async(&mut reader, protocol::MAX_HELLO_FRAME).await;
        let max_frame = hello_answer(read, sent)?;
        let pending: Arc<Mutex<Option<Pending>>> = Arc::new(Mutex::new(Some(HashMap::new())));
        let (outbox, mut frames) = mpsc::channel::<Vec<u8>>(64);
        let write_pending = pending.clone();
        let writer_task = tokio::spawn(async move {
            while let Some(body) = frames.recv().await {
                if protocol::write_frame_async(&mut writer, &body)
                    .await
                    .is_err()
                {
                    break;
                }
            }
            // Nothing more can be sent: fail whoever still waits.
            fail_all(&write_pending, None);
        });
        let reader_task = tokio::spawn(read_answers(reader, pending.clone(), max_frame));
        Ok(AsyncIpcClient {
            inner: Arc::new(AsyncInner {
                outbox,
                pending,
                next_id: AtomicU64::new(1),
                max_frame,
                tasks: [writer_task.abort_handle(), reader_task.abort_handle()],
            }),
        })
    }

    /// The largest frame the host takes (from its welcome).
    pub fn max_frame(&self) -> usize {
        self.inner.max_frame
    }

    async fn exchange(&self, mut request: Request) -> Result<Response, ClientError> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        request.id = id;
        let body = checked(protocol::encode(&request), self.inner.max_frame)?;
        let (answer, answered) = oneshot::channel();
        {
            let mut pending = self.inner.pending.lock_unpoisoned();
            let Some(pending) = pending.as_mut() else {
                return Err(closed());
            };
            pending.insert(id, answer);
        }
        let _guard = PendingGuard {
            id,
            pending: &self.inner.pending,
        };
        // Once queued, the frame is written whole by the writer task even if
        // this call is given up on.
        if self.inner.outbox.send(body).await.is_err() {
            return Err(closed());
        }
        match answered.await {
            Ok(result) => result.and_then(into_result),
            Err(_) => Err(closed()),
        }
    }

    /// As [`IpcClient::call_raw`](super::IpcClient::call_raw).
    ///
    /// # Errors
    ///
    /// As [`IpcClient::call_raw`](super::IpcClient::call_raw).
    pub async fn call_raw(&self, method: &str, params: &[u8]) -> Result<Vec<u8>, ClientError> {
        let response = self.exchange(raw_request(method, params)).await?;
        Ok(payload(response))
    }

    /// As [`IpcClient::call`](super::IpcClient::call).
    ///
    /// # Errors
    ///
    /// As [`IpcClient::call`](super::IpcClient::call).
    pub async fn call<C: IpcCommand>(&self, command: &C) -> Result<C::Response, ClientError> {
        let request = typed_request(command)?;
        typed::<C>(self.exchange(request).await)
    }

    /// As [`IpcClient::call_argv`](super::IpcClient::call_argv).
    ///
    /// # Errors
    ///
    /// As [`IpcClient::call_argv`](super::IpcClient::call_argv).
    pub async fn call_argv<S: AsRef<str>>(
        &self,
        method: &str,
        argv: &[S],
        stdin: Option<Vec<u8>>,
    ) -> Result<ArgvOutcome, ClientError> {
        let response = self
            .exchange(argv_request(method, argv, stdin, false))
            .await?;
        unprompted_argv_outcome(response)
    }
}

/// Fails every waiting call, and every later one.
fn fail_all(pending: &Mutex<Option<Pending>>, remote: Option<&RemoteError>) {
    let waiting = pending.lock_unpoisoned().take();
    for (_, waiter) in waiting.into_iter().flatten() {
        let error = match remote {
            Some(remote) => ClientError::Remote(Box::new(remote.clone())),
            None => closed(),
        };
        let _ = waiter.send(Err(error));
    }
}

/// Hands each answer to the call waiting for it; when the connection ends,
/// fails every call still waiting, and every later one.
async fn read_answers<R>(mut reader: R, pending: Arc<Mutex<Option<Pending>>>, max_frame: usize)
where
    R: tokio::io::AsyncRead + Unpin,
{
    let ended: ClientError = loop {
        let body = match frame(protocol::read_frame_async(&mut reader, max_frame).await) {
            Ok(body) => body,
            Err(error) => break error,
        };
        let response: Response = match protocol::decode(&body) {
            Ok(response) => response,
            Err(error) => break ClientError::Protocol(error.to_string()),
        };
        if response.id == 0 {
            // The host speaks for the connection as a whole (a bad frame,
            // say): every waiting call gets that answer.
            break into_result(response).err().unwrap_or_else(closed);
        }
        let waiter = pending
            .lock_unpoisoned()
            .as_mut()
            .and_then(|p| p.remove(&response.id));
        if let Some(waiter) = waiter {
            let _ = waiter.send(Ok(response));
        }
    };
    fail_all(&pending, ended.remote());
}
