//! The statically linked client `scripts/build-static-client` makes: it
//! needs no dynamic loader and no shared library, `gangway wrappers
//! --style links` places it before the dynamic client beside it, and a
//! call through its links is answered.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{GANGWAY, GANGWAY_CLIENT, Host, Tally, require, text};

/// Where `scripts/build-static-client` put the client (`scripts/test`
/// names it in `GANGWAY_STATIC_CLIENT`).
fn static_client() -> PathBuf {
    let path = std::env::var_os("GANGWAY_STATIC_CLIENT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/static/gangway-client-static")
        });
    assert!(
        path.is_file(),
        "{} is missing: run scripts/build-static-client",
        path.display()
    );
    path
}

/// What `readelf` with `flag` says of `program`.
fn readelf(flag: &str, program: &Path) -> String {
    let out = Command::new("readelf")
        .args([flag, "-W"])
        .arg(program)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
#[ignore = "needs the static client (scripts/build-static-client) and readelf"]
fn the_static_client_needs_no_loader_and_link_wrappers_place_it_first() {
    require(&["readelf"]);
    let client = static_client();
    let program_headers = readelf("-l", &client);
    assert!(
        !program_headers.contains("INTERP"),
        "the static client asks for a program interpreter: {program_headers}"
    );
    let dynamic = readelf("-d", &client);
    assert!(
        !dynamic.contains("(NEEDED)"),
        "the static client needs shared libraries: {dynamic}"
    );
    // Installed as a host would: `gangway` with both clients beside it.
    let bin = tempfile::tempdir().unwrap();
    for (from, name) in [
        (Path::new(GANGWAY), "gangway"),
        (Path::new(GANGWAY_CLIENT), "gangway-client"),
        (client.as_path(), "gangway-client-static"),
    ] {
        std::fs::copy(from, bin.path().join(name)).unwrap();
    }
    let manifest = tempfile::NamedTempFile::new().unwrap();
    let router = common::router(&Tally::default());
    std::fs::write(
        manifest.path(),
        serde_json::to_vec(&router.manifest()).unwrap(),
    )
    .unwrap();
    let links = tempfile::tempdir().unwrap();
    let out = Command::new(bin.path().join("gangway"))
        .args(["wrappers", "--style", "links", "--manifest"])
        .arg(manifest.path())
        .arg("--out")
        .arg(links.path())
        .env_remove("GANGWAY_BIN")
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(links.path().join("gangway")).unwrap(),
        std::fs::read(&client).unwrap(),
        "the placed client is the static one"
    );
    let host = Host::start();
    let mut call = Command::new(links.path().join("echoargs"));
    call.args(["a", "b c"]);
    host.env().apply(&mut call);
    let out = common::run(call, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[\"a\",\"b c\"]\n");
}
