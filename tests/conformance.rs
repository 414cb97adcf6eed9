//! The official MCP conformance suite (`@modelcontextprotocol/conformance`
//! 0.1.12, as tests/peers/node/package-lock.json pins it; Node 20 runs it)
//! against `examples/conformance.rs`, a gangway server over Streamable
//! HTTP: the `server` scenarios on initialization, ping and tools, and two
//! on the HTTP transport itself.
//!
//! Left out, as gangway has no such feature (a command's result is text,
//! and a server has tools only):
//! - `logging-set-level`, `tools-call-with-logging`: no `logging/setLevel`
//!   or log notifications (a handler's stderr is part of its result).
//! - `completion-complete`: no completion.
//! - `tools-call-image`, `tools-call-audio`, `tools-call-embedded-resource`,
//!   `tools-call-mixed-content`: a result is text content only.
//! - `tools-call-sampling`, `tools-call-elicitation`,
//!   `elicitation-sep1034-defaults`, `elicitation-sep1330-enums`: a command
//!   cannot ask the client anything.
//! - `json-schema-2020-12`: it wants `$defs` and `$ref` kept in an
//!   `inputSchema`; gangway's schemas are self-contained by design (no
//!   `$ref`, which some clients cannot follow).
//! - `server-sse-polling`: it needs a tool that closes its SSE stream
//!   mid-call (SEP-1699); a command has no hold on the transport.
//! - `resources-*`, `prompts-*`: no resources or prompts.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The scenarios run, each with the number of checks it makes.
const SCENARIOS: &[(&str, usize)] = &[
    ("server-initialize", 1),
    ("ping", 1),
    ("tools-list", 1),
    ("tools-call-simple-text", 1),
    ("tools-call-error", 1),
    ("tools-call-with-progress", 1),
    // The transport: Host/Origin checked against DNS rebinding, and
    // concurrent POST streams in one session.
    ("dns-rebinding-protection", 2),
    ("server-sse-multiple-streams", 2),
];

/// `examples/conformance.rs`, built beside this test by `cargo test`.
fn example_server() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let server = profile_dir.join("examples").join("conformance");
    assert!(
        server.is_file(),
        "{} is missing: `cargo test` builds the examples",
        server.display()
    );
    server
}

/// The suite's command line program, as `npm ci --prefix tests/peers/node`
/// (scripts/test) installs it.
fn suite() -> PathBuf {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers/node/node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        suite.is_file(),
        "{} is missing: run `npm ci --prefix tests/peers/node`",
        suite.display()
    );
    suite
}

/// The example, killed when dropped.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the example on a free loopback port; it and its URL.
fn start() -> (Server, String) {
    let mut child = Command::new(example_server())
        .arg("127.0.0.1:0")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the example starts");
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let server = Server(child);
    let line = lines
        .next()
        .expect("the example prints its URL")
        .expect("readable");
    let url = line
        .strip_prefix("conformance example: serving MCP on ")
        .unwrap_or_else(|| panic!("the URL line: {line}"))
        .to_owned();
    // Keep reading, so the example never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (server, url)
}

/// The `Passed: <passed>/<counted>, <failed> failed, <warnings> warnings`
/// line of the suite's output.
fn tally(output: &str) -> Option<(usize, usize, usize)> {
    let line = output
        .lines()
        .find_map(|line| line.trim().strip_prefix("Passed: "))?;
    let (passed, rest) = line.split_once('/')?;
    let (counted, rest) = rest.split_once(", ")?;
    let failed = rest.split_once(" failed")?.0;
    Some((
        passed.parse().ok()?,
        counted.parse().ok()?,
        failed.parse().ok()?,
    ))
}

#[test]
#[ignore = "needs node with the MCP conformance suite"]
fn the_conformance_suite_passes_its_initialization_ping_and_tools_scenarios() {
    let suite = suite();
    let (_server, url) = start();
    let mut passed_checks = 0;
    for &(scenario, checks) in SCENARIOS {
        let output = Command::new("node")
            .arg(&suite)
            .args(["server", "--url", &url, "--scenario", scenario])
            .output()
            .expect("node runs the suite");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let counts = tally(&stdout);
        assert_eq!(
            counts,
            Some((checks, checks, 0)),
            "{scenario}: every check passes\n{stdout}\n{stderr}"
        );
        assert!(output.status.success(), "{scenario}\n{stdout}\n{stderr}");
        passed_checks += checks;
    }
    eprintln!(
        "MCP conformance: {} scenarios, {passed_checks} checks passed",
        SCENARIOS.len()
    );
}

#[test]
fn the_readme_names_exactly_the_scenarios_this_test_runs() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme
        .find("passes these eight scenarios")
        .expect("the README's conformance sentence");
    let sentence = &readme[start..start + readme[start..].find("Left out").unwrap()];
    let named: Vec<&str> = sentence
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|word| !word.contains('/') && !word.contains('.'))
        .collect();
    let run: Vec<&str> = SCENARIOS.iter().map(|&(scenario, _)| scenario).collect();
    assert_eq!(named, run);
}
