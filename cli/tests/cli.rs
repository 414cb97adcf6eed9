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
    common::streaming::derived_router(
        &common::Tally::default(),
        &common::streaming::Probes::default(),
    )
    .manifest()
}

/// How many commands the test router has: one wrapper each.
fn commands() -> usize {
    runtime_manifest().commands.len()
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
        text(&out.stderr).contains(&format!("{} written, 0 unchanged, 0 removed", commands())),
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
        text(&again.stderr).contains(&format!("0 written, {} unchanged, 0 removed", commands())),
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

/// `gangway wrappers --style links` from the test sources into `out`,
/// placing `client`, with `extra` arguments.
fn link_wrappers(src: &str, out: &str, client: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "wrappers", "--src", src, "--out", out, "--style", "links", "--client", client,
    ];
    args.extend_from_slice(extra);
    gangway(&args)
}

/// The entries of a wrapper directory: each name with its link target, or
/// `None` for a file.
fn entries(dir: &Path) -> Vec<(String, Option<String>)> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let target = std::fs::read_link(e.path())
                .ok()
                .map(|t| t.to_string_lossy().into_owned());
            (e.file_name().to_string_lossy().into_owned(), target)
        })
        .collect();
    found.sort();
    found
}

#[test]
fn link_wrappers_are_written_checked_kept_switched_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let src = sources();
    let check = links_in(&src, dir.path(), &["--check"]);
    assert_eq!(check.status.code(), Some(1), "nothing written yet");
    let diff = text(&check.stdout);
    assert!(
        diff.contains("gangway: missing, want a copy of")
            && diff.contains("search: missing link to gangway"),
        "{diff}"
    );
    links_replace_scripts(&src, dir.path());
    stale_links_go_and_others_stay(&src, dir.path());
    a_changed_client_is_replaced(&src, dir.path());
    scripts_replace_links(&src, dir.path());
}

/// `gangway wrappers --style links` from `src` into `dir`, with the test's
/// client program and `extra` arguments.
fn links_in(src: &str, dir: &Path, extra: &[&str]) -> std::process::Output {
    link_wrappers(src, dir.to_str().unwrap(), common::GANGWAY_CLIENT, extra)
}

/// Script wrappers written to `dir` first: link wrappers replace them, the
/// client program placed with its marker, and a second run changes nothing.
fn links_replace_scripts(src: &str, dir: &Path) {
    let out_dir = dir.to_str().unwrap();
    let client = common::GANGWAY_CLIENT;
    let links = |extra: &[&str]| links_in(src, dir, extra);
    assert!(
        gangway(&["wrappers", "--src", src, "--out", out_dir])
            .status
            .success()
    );
    let check = links(&["--check"]);
    assert!(
        text(&check.stdout).contains("search: a script, want a link to gangway"),
        "{}",
        text(&check.stdout)
    );
    let written = links(&[]);
    assert!(
        text(&written.stderr).contains(&format!(
            "{} written, 0 unchanged, 0 removed; client program placed",
            commands()
        )),
        "{}",
        text(&written.stderr)
    );
    assert!(dir.join(".gangway-client-placed").exists(), "the marker");
    let listed: Vec<_> = entries(dir)
        .into_iter()
        .filter(|(name, _)| !name.starts_with('.'))
        .collect();
    assert_eq!(
        listed.len(),
        commands() + 1,
        "a link each and the client: {listed:?}"
    );
    assert!(listed.contains(&("gangway".to_owned(), None)), "{listed:?}");
    assert!(
        listed
            .iter()
            .all(|(name, target)| name == "gangway" || target.as_deref() == Some("gangway")),
        "every command is a relative link to the client: {listed:?}"
    );
    assert_eq!(
        std::fs::read(dir.join("gangway")).unwrap(),
        std::fs::read(client).unwrap()
    );
    assert!(links(&["--check"]).status.success());
    let again = links(&[]);
    assert!(
        text(&again.stderr).contains(&format!("0 written, {} unchanged, 0 removed", commands()))
            && !text(&again.stderr).contains("client program placed"),
        "idempotent: {}",
        text(&again.stderr)
    );
}

/// In link wrappers in `dir`, a stale link goes; a link of someone else's
/// stays.
fn stale_links_go_and_others_stay(src: &str, dir: &Path) {
    let links = |extra: &[&str]| links_in(src, dir, extra);
    std::os::unix::fs::symlink("gangway", dir.join("gone")).unwrap();
    std::os::unix::fs::symlink("/bin/true", dir.join("mine")).unwrap();
    let check = links(&["--check"]);
    assert!(
        text(&check.stdout).contains("gone: a link to remove"),
        "{}",
        text(&check.stdout)
    );
    assert!(text(&links(&[]).stderr).contains("1 removed"));
    assert!(std::fs::symlink_metadata(dir.join("gone")).is_err());
    assert!(std::fs::symlink_metadata(dir.join("mine")).is_ok());
}

/// A changed client program in the link wrappers in `dir` is replaced.
fn a_changed_client_is_replaced(src: &str, dir: &Path) {
    let links = |extra: &[&str]| links_in(src, dir, extra);
    std::fs::remove_file(dir.join("gangway")).unwrap();
    std::fs::copy(GANGWAY, dir.join("gangway")).unwrap();
    assert!(
        text(&links(&["--check"]).stdout).contains("gangway: differs from"),
        "an older client is out of date"
    );
    assert!(text(&links(&[]).stderr).contains("client program placed"));
    assert!(links(&["--check"]).status.success());
}

/// Back to scripts in `dir`: every link becomes a script again, and the
/// placed client goes (first on PATH, it would shadow the real `gangway`).
fn scripts_replace_links(src: &str, dir: &Path) {
    let out_dir = dir.to_str().unwrap();
    let check = gangway(&["wrappers", "--src", src, "--out", out_dir, "--check"]);
    assert!(
        text(&check.stdout).contains("gangway: the client program link wrappers placed, to remove"),
        "{}",
        text(&check.stdout)
    );
    let scripts = gangway(&["wrappers", "--src", src, "--out", out_dir]);
    assert!(
        text(&scripts.stderr).contains(&format!("{} written", commands()))
            && text(&scripts.stderr).contains("the client program link wrappers placed removed"),
        "{}",
        text(&scripts.stderr)
    );
    assert!(!dir.join("gangway").exists());
    assert!(!dir.join(".gangway-client-placed").exists());
    assert!(
        gangway(&["wrappers", "--src", src, "--out", out_dir, "--check"])
            .status
            .success()
    );
    assert_eq!(
        std::fs::read_link(dir.join("search")).ok(),
        None,
        "a script, not a link"
    );
}

#[test]
fn link_wrappers_refuse_what_they_cannot_place() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    let src = sources();
    let out = gangway(&[
        "wrappers",
        "--src",
        &src,
        "--out",
        out_dir,
        "--client",
        common::GANGWAY_CLIENT,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("`--client` places a program for `--style links`"),
        "{}",
        text(&out.stderr)
    );
    let out = link_wrappers(&src, out_dir, "/nonexistent/gangway-client", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("the client program /nonexistent/gangway-client cannot be read"),
        "{}",
        text(&out.stderr)
    );
    // A file in the client's place that is not a program stays.
    std::fs::write(dir.path().join("gangway"), "my notes\n").unwrap();
    let out = link_wrappers(&src, out_dir, common::GANGWAY_CLIENT, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("is not a gangway wrapper"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("gangway")).unwrap(),
        "my notes\n"
    );
    // Nor does a program of the user's own (the `gangway` CLI in ~/bin).
    let mine = tempfile::tempdir().unwrap();
    std::fs::copy(GANGWAY, mine.path().join("gangway")).unwrap();
    let out = link_wrappers(
        &src,
        mine.path().to_str().unwrap(),
        common::GANGWAY_CLIENT,
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(mine.path().join("gangway")).unwrap(),
        std::fs::read(GANGWAY).unwrap(),
        "the user's own program is left as it was"
    );
    let out = gangway(&[
        "wrappers", "--style", "pipes", "--src", &src, "--out", out_dir,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("[possible values: scripts, links]"));
}

#[test]
fn the_lean_client_answers_version_and_help() {
    let run = |args: &[&str]| {
        let mut command = Command::new(common::GANGWAY_CLIENT);
        command.args(args);
        common::run(command, None)
    };
    let version = run(&["--version"]);
    assert_eq!(
        text(&version.stdout),
        format!("gangway {}\n", env!("CARGO_PKG_VERSION"))
    );
    let help = run(&["--help"]);
    assert!(
        text(&help.stdout).contains("Usage: gangway-client call <command>"),
        "{}",
        text(&help.stdout)
    );
    let wrong = run(&["wrappers"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(text(&wrong.stderr).contains("this client only makes calls"));
}

#[test]
fn the_client_through_an_alias_of_its_own_is_still_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let alias = dir.path().join("gw");
    std::os::unix::fs::symlink(common::GANGWAY_CLIENT, &alias).unwrap();
    let out = common::run(
        {
            let mut command = Command::new(&alias);
            command.arg("--version");
            command
        },
        None,
    );
    assert_eq!(
        text(&out.stdout),
        format!("gangway {}\n", env!("CARGO_PKG_VERSION")),
        "{}",
        text(&out.stderr)
    );
}

#[test]
#[ignore = "needs nm (binutils)"]
fn the_lean_client_links_no_async_runtime_parser_renderer_or_syn() {
    require(&["nm"]);
    let symbols = Command::new("nm")
        .args(["-C", common::GANGWAY_CLIENT])
        .output()
        .unwrap();
    assert!(symbols.status.success(), "{}", text(&symbols.stderr));
    let symbols = text(&symbols.stdout);
    assert!(
        symbols.contains("gangway::caller::run"),
        "nm reads the program"
    );
    for heavy in ["tokio::", "clap_builder::", "handlebars::", "syn::"] {
        assert!(
            !symbols.contains(heavy),
            "the lean client links {heavy} code"
        );
    }
}

#[test]
fn a_link_named_like_a_client_subcommand_is_still_that_command() {
    let host = common::Host::start_styled(common::Style::Links);
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(common::GANGWAY_CLIENT, dir.path().join("gangway")).unwrap();
    for name in ["call", "wrappers"] {
        let link = dir.path().join(name);
        std::os::unix::fs::symlink("gangway", &link).unwrap();
        let mut command = Command::new(&link);
        command.args(["--help"]);
        host.env().apply(&mut command);
        let out = common::run(command, None);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains(&format!("unknown command `{name}`")),
            "the host was asked for command `{name}`: {}",
            text(&out.stderr)
        );
    }
}
