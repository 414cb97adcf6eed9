//! How a wrapper call prints and what it makes of standard input, as a
//! shell user expects: text ends with one newline, bytes stay exact, `()`
//! prints nothing, and empty standard input is no input. Each case runs the
//! wrappers from `PATH` and directly: a script wrapper as the shell's own
//! script (`SHELL WRAPPER args`), a link wrapper by its path; each with
//! both wrapper styles.

mod common;

use std::process::Output;

use common::{Host, Style, each_style, require, shells, text};

/// A shell script calling `command` both ways: through `PATH`, and
/// directly (a script wrapper as this shell's script, a link by its path).
/// `{}` in `template` stands for the call.
fn script_both_ways(host: &Host, shell: &[&str], command: &str, template: &str) -> [String; 2] {
    let as_script = match host.style {
        Style::Scripts => format!("{} \"$W/{command}\"", shell.join(" ")),
        Style::Links => format!("\"$W/{command}\""),
    };
    [
        template.replace("{}", command),
        template.replace("{}", &as_script),
    ]
}

fn run(host: &Host, shell: &[&str], script: &str, stdin: Option<&[u8]>) -> Output {
    let wrappers = host.wrappers.path().to_str().unwrap().to_owned();
    let script = format!("W={}; {script}", shlex::try_quote(&wrappers).unwrap());
    host.shell(shell, &script, &[], stdin)
}

fn ok(output: &Output, what: &str) -> Vec<u8> {
    assert!(
        output.status.success(),
        "{what}: status {:?}, stderr: {}",
        output.status,
        text(&output.stderr)
    );
    output.stdout.clone()
}

/// Every output and stdin rule, under one shell.
fn output_and_stdin_rules(host: &Host, shell: &[&str]) {
    // Text ends with a newline, so calls in a row read line by line.
    for script in script_both_ways(host, shell, "greet", "{} a; {} b") {
        let out = ok(&run(host, shell, &script, None), &script);
        assert_eq!(text(&out), "hello a\nhello b\n", "{shell:?}: {script}");
    }
    // Text that already ends with one keeps exactly one.
    for script in script_both_ways(host, shell, "ping", "{}; {}") {
        let out = ok(&run(host, shell, &script, None), &script);
        assert_eq!(out, b"pong\npong\n", "{shell:?}: {script}");
    }
    // JSON ends with a newline.
    for script in script_both_ways(host, shell, "counter", "{}") {
        let out = ok(&run(host, shell, &script, None), &script);
        assert!(
            out.ends_with(b"\n") && !out.ends_with(b"\n\n"),
            "{shell:?}: {script}: {out:?}"
        );
    }
    // Bytes, from a `Vec<u8>` and a `serde_bytes` response, stay exact.
    let mut data: Vec<u8> = (0..=255u8).collect();
    data.extend([0, b'\n', 0, b'x']);
    for command in ["bytes", "cat"] {
        for script in script_both_ways(host, shell, command, "{}") {
            let out = ok(&run(host, shell, &script, Some(&data)), &script);
            assert!(out == data, "{shell:?}: {script}: the bytes differ");
        }
    }

    // Empty input is no input: `/dev/null`, a closed descriptor and an
    // empty pipe leave an optional stdin argument `None`...
    for template in ["{} < /dev/null", "{} <&-", "printf '' | {}", ": | {}"] {
        for script in script_both_ways(host, shell, "note", template) {
            let out = ok(&run(host, shell, &script, None), &script);
            assert_eq!(text(&out), "no note\n", "{shell:?}: {script}");
        }
        // ...and give a required bytes argument its empty value.
        for script in script_both_ways(host, shell, "bytes", template) {
            let out = ok(&run(host, shell, &script, None), &script);
            assert!(out.is_empty(), "{shell:?}: {script}: {out:?}");
        }
    }
    // Input, even a single newline, is input.
    for script in script_both_ways(host, shell, "note", "echo | {}") {
        let out = ok(&run(host, shell, &script, None), &script);
        assert_eq!(text(&out), "a note of 1 bytes: \"\\n\"\n", "{shell:?}");
    }
    // 8 MiB still arrive whole...
    let big = vec![b'n'; 8 * 1024 * 1024];
    for script in script_both_ways(host, shell, "note", "{}") {
        let out = ok(&run(host, shell, &script, Some(&big)), &script);
        assert_eq!(
            text(&out),
            "a note of 8388608 bytes: \"nnnnnnnn\"\n",
            "{shell:?}: {script}"
        );
    }
    // ...and an explicit argument still wins over a pipe.
    for script in script_both_ways(host, shell, "note", "{} --note given") {
        let out = ok(&run(host, shell, &script, Some(b"piped")), &script);
        assert_eq!(
            text(&out),
            "a note of 5 bytes: \"given\"\n",
            "{shell:?}: {script}"
        );
    }
}

#[test]
fn json_keeps_the_field_order_in_one_line_on_a_pipe() {
    each_style(|style| {
        let host = Host::start_styled(style);
        let piped = ok(&host.shell(&["sh"], "report", &[], None), "report");
        assert_eq!(
            text(&piped),
            "{\"zebra\":26,\"apple\":\"a\",\"middle\":[true,false]}\n"
        );
    });
}

#[test]
#[ignore = "needs script (util-linux)"]
fn json_is_indented_on_a_terminal() {
    each_style(|style| {
        let host = Host::start_styled(style);
        // `script` gives the call a terminal for stdout, as a person has.
        require(&["script"]);
        let mut command = std::process::Command::new("script");
        command.args(["-qec", "report", "/dev/null"]);
        host.env().apply(&mut command);
        let out = common::run(command, None);
        assert!(out.status.success(), "{}", text(&out.stderr));
        // The terminal turns each \n into \r\n.
        let shown = text(&out.stdout).replace("\r\n", "\n");
        assert_eq!(
            shown,
            "{\n  \"zebra\": 26,\n  \"apple\": \"a\",\n  \"middle\": [\n    true,\n    false\n  ]\n}\n"
        );
    });
}

#[test]
fn output_and_stdin_rules_under_sh() {
    each_style(|style| {
        output_and_stdin_rules(&Host::start_styled(style), &["sh"]);
    });
}

#[test]
#[ignore = "needs dash, bash, busybox and zsh"]
fn output_and_stdin_rules_under_dash_bash_busybox_and_zsh() {
    require(&["dash", "bash", "busybox", "zsh"]);
    each_style(|style| {
        let host = Host::start_styled(style);
        let shells = shells();
        assert_eq!(shells.len(), 6, "{shells:?}");
        for shell in shells {
            output_and_stdin_rules(&host, &shell);
        }
    });
}
