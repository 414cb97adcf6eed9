//! The `gangway` subcommands that generate: wrappers from a manifest or from
//! source (the same model as the derive, so the same wrappers), `--check`,
//! the manifest, the reference; and the wrappers pass shellcheck.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::{GANGWAY, require, text};
use gangway::tool::Manifest;

fn gangway(args: &[&str]) -> std::process::Output {
    let mut command = Command::new(GANGWAY);
    command.args(args);
    common::run(command, None)
}

/// The sources the scanner reads: the same file that defines the test
/// host's commands.
fn sources() -> String {
    format!("{}/tests/common", env!("CARGO_MANIFEST_DIR"))
}

fn runtime_manifest() -> Manifest {
    common::router(&common::Tally::default()).manifest()
}

fn listing(dir: &Path) -> Vec<(String, String, u32)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let meta = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read_to_string(e.path()).unwrap(),
                meta.permissions().mode() & 0o777,
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn the_source_scan_gives_the_manifest_the_router_publishes() {
    let out = gangway(&["manifest", "--src", &sources()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let scanned: Manifest = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(scanned, runtime_manifest());
}

#[test]
fn wrappers_from_a_manifest_and_from_source_are_identical() {
    let manifest_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        manifest_file.path(),
        serde_json::to_vec(&runtime_manifest()).unwrap(),
    )
    .unwrap();
    let from_manifest = tempfile::tempdir().unwrap();
    let from_source = tempfile::tempdir().unwrap();
    let manifest_path = manifest_file.path().to_str().unwrap();
    let out = gangway(&[
        "wrappers",
        "--manifest",
        manifest_path,
        "--out",
        from_manifest.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("13 written, 0 unchanged, 0 removed"),
        "{}",
        text(&out.stderr)
    );
    let out = gangway(&[
        "wrappers",
        "--src",
        &sources(),
        "--out",
        from_source.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let files = listing(from_manifest.path());
    assert_eq!(files.len(), runtime_manifest().commands.len());
    assert!(files.iter().all(|(_, _, mode)| *mode == 0o755));
    assert_eq!(files, listing(from_source.path()));
}

#[test]
fn check_reports_a_diff_and_writing_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    let src = sources();
    let check = gangway(&["wrappers", "--src", &src, "--out", out_dir, "--check"]);
    assert_eq!(check.status.code(), Some(1), "nothing written yet");
    assert!(
        text(&check.stdout).contains("+++ b/search"),
        "{}",
        text(&check.stdout)
    );
    assert!(
        text(&check.stderr).contains("out of date"),
        "{}",
        text(&check.stderr)
    );

    assert!(
        gangway(&["wrappers", "--src", &src, "--out", out_dir])
            .status
            .success()
    );
    let before = listing(dir.path());
    let check = gangway(&["wrappers", "--src", &src, "--out", out_dir, "--check"]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stdout));
    let again = gangway(&["wrappers", "--src", &src, "--out", out_dir]);
    assert!(
        text(&again.stderr).contains("0 written, 13 unchanged, 0 removed"),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(listing(dir.path()), before);

    // A wrapper of a command that no longer exists goes away.
    let stale = before
        .iter()
        .find(|(name, ..)| name == "ping")
        .unwrap()
        .1
        .replace("ping", "gone");
    std::fs::write(dir.path().join("gone"), stale).unwrap();
    let check = gangway(&["wrappers", "--src", &src, "--out", out_dir, "--check"]);
    assert_eq!(check.status.code(), Some(1));
    assert!(
        text(&check.stdout).contains("--- a/gone\n+++ /dev/null"),
        "{}",
        text(&check.stdout)
    );
    let cleaned = gangway(&["wrappers", "--src", &src, "--out", out_dir]);
    assert!(
        text(&cleaned.stderr).contains("1 removed"),
        "{}",
        text(&cleaned.stderr)
    );
    assert!(!dir.path().join("gone").exists());
}

#[test]
fn the_reference_describes_every_command_for_an_agent() {
    let out = gangway(&["reference", "--src", &sources()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reference = text(&out.stdout);
    for schema in &runtime_manifest().commands {
        assert!(
            reference.contains(&format!("## `{}`", schema.name)),
            "{reference}"
        );
        assert!(reference.contains(&schema.usage()), "{reference}");
    }
    assert!(
        reference.contains("| `-n, --limit` | uint | How many. (default: 10) |"),
        "{reference}"
    );
}

#[test]
fn bad_invocations_name_the_problem() {
    let out = gangway(&["wrappers", "--out", "/tmp/x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--manifest"),
        "{}",
        text(&out.stderr)
    );
    let out = gangway(&["manifest", "--src", "/definitely/not/here"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("/definitely/not/here"),
        "{}",
        text(&out.stderr)
    );
    let out = gangway(&["--version"]);
    assert_eq!(
        text(&out.stdout).trim(),
        format!("gangway {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
#[ignore = "needs shellcheck"]
fn the_wrappers_pass_shellcheck() {
    require(&["shellcheck"]);
    let dir = tempfile::tempdir().unwrap();
    gangway_codegen::write_wrappers(&runtime_manifest(), dir.path()).unwrap();
    for (name, ..) in listing(dir.path()) {
        let out = common::run(
            {
                let mut c = Command::new("shellcheck");
                c.args(["-s", "sh", "--enable=all"])
                    .arg(dir.path().join(&name));
                c
            },
            None,
        );
        assert!(
            out.status.success(),
            "{name}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
}

#[test]
fn the_scan_reads_only_what_the_crate_serves_and_warns_about_what_it_skips() {
    let krate = tempfile::tempdir().unwrap();
    let root = krate.path();
    std::fs::create_dir_all(root.join("src/nested")).unwrap();
    std::fs::create_dir_all(root.join("tests")).unwrap();
    std::fs::write(root.join("Cargo.toml"), "[package]\nname = \"host\"\n").unwrap();
    std::fs::write(
        root.join("src/lib.rs"),
        r#"
        /// Served.
        #[derive(gangway::IpcCommand, serde::Serialize, serde::Deserialize)]
        #[ipc(response = String)]
        pub struct Served { pub text: String }

        #[cfg(test)]
        mod tests {
            #[derive(gangway::IpcCommand, serde::Serialize, serde::Deserialize)]
        #[ipc(response = String)]
            pub struct OnlyInTests { pub n: u32 }
        }

        #[cfg(all(unix, test))]
        #[derive(gangway::IpcCommand, serde::Serialize, serde::Deserialize)]
        #[ipc(response = String)]
        pub struct AlsoOnlyInTests { pub n: u32 }

        #[cfg(test)]
        mod unit;
        #[cfg(test)]
        #[path = "elsewhere/fixtures.rs"]
        mod fixtures;
        mod nested;

        #[cfg(not(test))]
        #[derive(gangway::IpcCommand, serde::Serialize, serde::Deserialize)]
        #[ipc(response = String)]
        pub struct NotInTests { pub n: u32 }
        "#,
    )
    .unwrap();
    std::fs::write(root.join("src/nested/broken.rs"), "pub struct {").unwrap();
    let test_command = "#[derive(gangway::IpcCommand)] #[ipc(response = String)] pub struct InTestFile { pub n: u32 }";
    std::fs::create_dir_all(root.join("src/unit")).unwrap();
    std::fs::create_dir_all(root.join("src/elsewhere")).unwrap();
    std::fs::write(root.join("src/unit.rs"), test_command).unwrap();
    std::fs::write(root.join("src/unit/deeper.rs"), test_command).unwrap();
    std::fs::write(root.join("src/elsewhere/fixtures.rs"), test_command).unwrap();
    std::fs::write(
        root.join("src/nested/conditional.rs"),
        r#"
        #[cfg_attr(feature = "ipc", derive(gangway::IpcCommand))]
        #[ipc(response = String)]
        pub struct Conditional { pub n: u32 }
        "#,
    )
    .unwrap();
    std::fs::write(
        root.join("tests/fixture.rs"),
        "#[derive(gangway::IpcCommand)] #[ipc(response = String)] pub struct Fixture { pub n: u32 }",
    )
    .unwrap();

    let out = gangway(&["manifest", "--src", root.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let manifest: Manifest = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<_> = manifest
        .commands
        .iter()
        .map(|c| c.name.to_string())
        .collect();
    assert_eq!(names, ["not_in_tests", "served"]);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("broken.rs: skipped, not valid Rust"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`Conditional` derives `IpcCommand` under `cfg_attr`"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
}

#[test]
fn wrappers_never_overwrite_a_file_gangway_did_not_write() {
    let out_dir = tempfile::tempdir().unwrap();
    let mine = out_dir.path().join("upper");
    std::fs::write(&mine, "#!/bin/sh\nupper my own script\n").unwrap();
    let src = sources();
    let out = gangway(&[
        "wrappers",
        "--src",
        &src,
        "--out",
        out_dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("refusing to replace") && stderr.contains("upper"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&mine).unwrap(),
        "#!/bin/sh\nupper my own script\n"
    );
    // Refused before anything was written.
    assert_eq!(listing(out_dir.path()).len(), 1);
}
