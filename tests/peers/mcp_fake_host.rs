//! A gangway host whose commands change while it serves, speaking the wire
//! protocol by hand (`gangway::ipc::protocol`): a real `IpcServer`'s router
//! is fixed once it starts. It greets one client and answers its `list`s
//! with the manifest of the moment, counting them; any other request fails
//! the test. For the tests of a forwarding server's `tools/list`
//! (`tests/mcp_host_list.rs` in process, `cli/tests/mcp.rs` through
//! `gangway mcp`), which include it with `#[path]`; with the list request
//! they send, and what they read from its answer.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use gangway::ipc::Endpoint;
use gangway::ipc::protocol::{self, ClientFrame, Hello, HostFrame, Response};
use gangway::tool::Manifest;

/// The token the host takes.
pub const TOKEN: &str = "a-test-token";

/// What the host may serve, what it serves now, and how many lists it
/// answered; and the directory of its socket, kept while it serves.
#[derive(Clone)]
pub struct FakeHost {
    all: Manifest,
    now: Arc<Mutex<Manifest>>,
    lists: Arc<AtomicUsize>,
    _dir: Arc<tempfile::TempDir>,
}

impl FakeHost {
    /// A host on a Unix socket in a directory of its own, on the current
    /// runtime, serving the commands of `all` named in `names` (it may come
    /// to serve the rest); its endpoint.
    pub fn start(all: Manifest, names: &[&str]) -> (FakeHost, Endpoint) {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("host");
        let listener = tokio::net::UnixListener::bind(&socket).unwrap();
        let host = FakeHost {
            now: Arc::new(Mutex::new(all.clone())),
            all,
            lists: Arc::new(AtomicUsize::new(0)),
            _dir: Arc::new(dir),
        };
        host.serve(names);
        tokio::spawn(host.clone().answer(listener));
        (host, Endpoint::Unix(socket))
    }

    /// From now on the host serves the commands named in `names`.
    pub fn serve(&self, names: &[&str]) {
        let mut manifest = self.all.clone();
        manifest
            .commands
            .retain(|command| names.contains(&&*command.name));
        *self.now.lock().unwrap() = manifest;
    }

    /// How many lists the host answered.
    pub fn lists(&self) -> usize {
        self.lists.load(Ordering::SeqCst)
    }

    /// Greets one client, then answers its lists until it goes.
    async fn answer(self, listener: tokio::net::UnixListener) {
        let (stream, _) = listener.accept().await.unwrap();
        let (mut read, mut write) = stream.into_split();
        let hello = protocol::read_frame_async(&mut read, protocol::MAX_HELLO_FRAME)
            .await
            .unwrap()
            .unwrap();
        let hello: Hello = protocol::decode(&hello).unwrap();
        assert_eq!((hello.v, hello.token.as_str()), (protocol::VERSION, TOKEN));
        // The welcome's required fields, as the map a host writes.
        let welcome =
            serde_json::json!({"v": protocol::VERSION, "max_frame": protocol::DEFAULT_MAX_FRAME});
        protocol::write_frame_async(&mut write, &protocol::encode(&welcome))
            .await
            .unwrap();
        while let Ok(Some(body)) =
            protocol::read_frame_async(&mut read, protocol::DEFAULT_MAX_FRAME).await
        {
            let frame: ClientFrame = protocol::decode(&body).unwrap();
            let ClientFrame::List(list) = frame else {
                panic!("only lists are asked for here: {frame:?}");
            };
            let manifest = serde_json::to_vec(&*self.now.lock().unwrap()).unwrap();
            let mut answer = Response::success(list.id);
            answer.result = Some(serde_bytes::ByteBuf::from(manifest));
            self.lists.fetch_add(1, Ordering::SeqCst);
            let frame = protocol::encode(&HostFrame::Answer(answer));
            if protocol::write_frame_async(&mut write, &frame)
                .await
                .is_err()
            {
                return;
            }
        }
    }
}

/// A `tools/list` request, numbered `id`.
pub fn list_request(id: u64) -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})
}

/// The names of the tools in `answer`, the answer to a `tools/list`.
pub fn tool_names(answer: &serde_json::Value) -> Vec<String> {
    let tools = answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {answer}"));
    tools
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}
