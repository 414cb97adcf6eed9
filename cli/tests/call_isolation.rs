//! A call's handler runs on a task of its own, apart from its connection's
//! reading and writing: a handler that blocks before its first await (sync
//! work, or a blocking section bridged with `block_in_place`) holds up
//! neither its connection's other calls nor the writing of its own output.

use std::time::{Duration, Instant};

use gangway::IpcCommand;
use gangway::ipc::{AsyncIpcClient, CallContext, IpcRouter, IpcServer};
use serde::{Deserialize, Serialize};

/// Awaits a short timer, then answers.
#[derive(Clone, Serialize, Deserialize, IpcCommand)]
#[ipc(name = "quick", response = String)]
pub struct Quick {}

impl Quick {
    async fn handle(&mut self) -> String {
        tokio::time::sleep(Duration::from_millis(20)).await;
        "quick".into()
    }
}

/// Blocks its thread for a second before answering, awaiting nothing.
#[derive(Clone, Serialize, Deserialize, IpcCommand)]
#[ipc(name = "blocking", response = String)]
pub struct Blocking {}

impl Blocking {
    async fn handle(&mut self) -> String {
        std::thread::sleep(Duration::from_secs(1));
        "blocking".into()
    }
}

/// Writes 3 MiB (three times the output window) from blocking code, as a
/// handler wrapping a synchronous library does.
#[derive(Clone, Serialize, Deserialize, IpcCommand)]
#[ipc(name = "bridge", response = String)]
pub struct Bridge {
    /// The call's context, which the output goes through.
    #[ipc(context)]
    #[serde(skip)]
    pub ctx: CallContext,
}

impl Bridge {
    async fn handle(&mut self) -> String {
        let ctx = self.ctx.clone();
        tokio::task::block_in_place(move || {
            let runtime = tokio::runtime::Handle::current();
            let chunk = vec![b'x'; 64 * 1024];
            for _ in 0..48 {
                if runtime.block_on(ctx.stdout(&chunk)).is_err() {
                    return "write failed".to_owned();
                }
            }
            "bridged".to_owned()
        })
    }
}

fn router() -> IpcRouter {
    IpcRouter::new()
        .register(Quick {})
        .register(Blocking {})
        .register(Bridge {
            ctx: CallContext::detached(),
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_handler_blocking_before_its_first_await_holds_up_no_other_call() {
    let server = IpcServer::start(router()).await.unwrap();
    let client = AsyncIpcClient::connect(&server.endpoint().to_string(), server.token())
        .await
        .unwrap();
    let quick = {
        let client = client.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            client.call(&Quick {}).await.unwrap();
            started.elapsed()
        })
    };
    // `quick` is read and waiting on its timer when `blocking` comes, on
    // the same connection.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let blocking = {
        let client = client.clone();
        tokio::spawn(async move { client.call(&Blocking {}).await.unwrap() })
    };
    let took = quick.await.unwrap();
    assert_eq!(blocking.await.unwrap(), "blocking");
    assert!(
        took < Duration::from_millis(800),
        "a 20 ms call answered after {took:?}: held up by another call's blocking handler"
    );
    server.shutdown(Duration::from_secs(1)).await;
}

#[test]
fn a_handler_bridging_to_blocking_code_gets_its_output_written() {
    // The host on a runtime of its own, leaked at the end: were the bug
    // back, a worker stuck for good would hold up dropping it.
    let host = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let server = host.block_on(IpcServer::start(router())).unwrap();
    let (endpoint, token) = (server.endpoint().to_string(), server.token().to_owned());
    let test = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let answered = test.block_on(async {
        let client = AsyncIpcClient::connect(&endpoint, &token).await.unwrap();
        let bridge = Bridge {
            ctx: CallContext::detached(),
        };
        tokio::time::timeout(Duration::from_secs(10), client.call(&bridge)).await
    });
    std::mem::forget(server);
    std::mem::forget(host);
    let answer = answered.expect("no answer in 10 s: the handler's output was never written");
    assert_eq!(answer.unwrap(), "bridged");
}
