//! `IpcRouter::dispatch` for a small command, beside its floor: the same
//! work done by hand (rmp-serde decode of the params into a struct, the same
//! handler body, rmp-serde encode of the response).
//!
//! Run with `cargo bench --bench dispatch`; compare the two medians.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use divan::{Bencher, black_box};
use gangway::IpcCommand;
use gangway::ipc::IpcRouter;
use serde::{Deserialize, Serialize};

fn main() {
    divan::main();
}

/// Greet someone.
#[derive(Clone, Serialize, Deserialize, IpcCommand)]
#[ipc(response = String)]
struct Greet {
    #[ipc(positional)]
    name: String,
    #[serde(default)]
    times: u32,
    excited: bool,
}

impl Greet {
    async fn handle(&mut self) -> String {
        greeting(&self.name, self.times, self.excited)
    }
}

fn greeting(name: &str, times: u32, excited: bool) -> String {
    let mark = if excited { "!" } else { "." };
    format!("hello {name} x{times}{mark}")
}

fn params() -> Vec<u8> {
    rmp_serde::to_vec_named(&Greet {
        name: "sandbox".into(),
        times: 3,
        excited: true,
    })
    .unwrap()
}

/// Polls a future that never waits to completion, without a runtime, so the
/// measurement is the router's own work.
fn run<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the benchmarked handler never waits"),
    }
}

#[divan::bench(sample_count = 300, sample_size = 2000)]
fn floor_decode_handle_encode(bencher: Bencher) {
    let params = params();
    bencher.bench_local(|| {
        let args: Greet = rmp_serde::from_slice(black_box(&params)).unwrap();
        let response = greeting(&args.name, args.times, args.excited);
        rmp_serde::to_vec_named(&response).unwrap()
    });
}

#[divan::bench(sample_count = 300, sample_size = 2000)]
fn router_dispatch(bencher: Bencher) {
    let params = params();
    let router = IpcRouter::new()
        .register(Greet {
            name: String::new(),
            times: 0,
            excited: false,
        })
        // A few neighbours, so the lookup is not trivially one entry.
        .register(Echo {
            text: String::new(),
        })
        .register(Ping {});
    bencher.bench_local(|| run(router.dispatch(black_box("greet"), black_box(&params))).unwrap());
}

/// A neighbour.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = String)]
struct Echo {
    text: String,
}

impl Echo {
    async fn handle(&mut self) -> String {
        self.text.clone()
    }
}

/// Another.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = ())]
struct Ping {}

impl Ping {
    async fn handle(&mut self) {}
}
