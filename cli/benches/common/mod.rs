//! What the CLI's bench binaries share: a runtime, wrappers written for a
//! router, a host serving it, and the median of samples.

use std::path::Path;
use std::time::Duration;

use gangway::ipc::{IpcRouter, IpcServer};

/// Every word it was given: the command the call benches make.
#[derive(Clone, serde::Serialize, gangway::IpcCommand)]
#[ipc(name = "echoargs", response = Vec<String>)]
#[allow(dead_code)] // not every bench calls it
pub struct EchoArgs {
    #[ipc(positional)]
    pub words: Vec<String>,
}

impl EchoArgs {
    async fn handle(&mut self) -> Vec<String> {
        std::mem::take(&mut self.words)
    }
}

/// The lean in-sandbox client the wrappers run.
pub const CLIENT: &str = env!("CARGO_BIN_EXE_gangway-client");

/// The host's runtime: two workers, as on the 2-core machines.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A fresh directory of `router`'s wrappers: scripts, or links to the
/// lean client.
pub fn wrappers(router: &IpcRouter, links: bool) -> tempfile::TempDir {
    if links {
        return wrappers_with_client(router, CLIENT);
    }
    let dir = tempfile::tempdir().unwrap();
    let style = gangway_codegen::WrapperStyle::Scripts;
    gangway_codegen::write_wrappers_with(&router.manifest(), dir.path(), &style).unwrap();
    dir
}

/// A fresh directory of `router`'s link wrappers to `client`.
pub fn wrappers_with_client(router: &IpcRouter, client: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let style = gangway_codegen::WrapperStyle::Links {
        client: client.into(),
    };
    gangway_codegen::write_wrappers_with(&router.manifest(), dir.path(), &style).unwrap();
    dir
}

/// The statically linked client `scripts/build-static-client` placed
/// (`GANGWAY_STATIC_CLIENT`, else `target/static/gangway-client-static`),
/// if it is there.
#[allow(dead_code)] // not every bench compares the static client
pub fn static_client() -> Option<String> {
    let path = std::env::var_os("GANGWAY_STATIC_CLIENT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../target/static/gangway-client-static")
        });
    path.is_file().then(|| path.to_string_lossy().into_owned())
}

/// `router` served with the lean client, its sandbox environment naming
/// `wrapper_dir`.
pub fn serve(
    runtime: &tokio::runtime::Runtime,
    router: IpcRouter,
    wrapper_dir: &Path,
) -> IpcServer {
    serve_with(runtime, IpcServer::builder(), router, wrapper_dir)
}

/// [`serve`] with the options of `builder`.
pub fn serve_with(
    runtime: &tokio::runtime::Runtime,
    builder: gangway::ipc::IpcServerBuilder,
    router: IpcRouter,
    wrapper_dir: &Path,
) -> IpcServer {
    runtime
        .block_on(
            builder
                .client_bin(CLIENT)
                .wrapper_dir(wrapper_dir)
                .start(router),
        )
        .unwrap()
}

/// The middle sample.
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The time per run of `times` runs of `run` in a row.
#[allow(dead_code)] // not every bench times a loop of its own
pub fn time_per(times: u32, mut run: impl FnMut()) -> Duration {
    let started = std::time::Instant::now();
    for _ in 0..times {
        run();
    }
    started.elapsed() / times
}
