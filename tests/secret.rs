//! `#[ipc(secret)]` through the derive: the flag in the schema a command
//! publishes (and in the manifest), `(secret)` in its help, and usage errors
//! that never repeat a secret's value.

use gangway::IpcCommand;
use gangway::ipc::{ArgvOutcome, IpcError, IpcRouter};
use gangway::tool::ToolSchema;
use serde::Serialize;

/// Log in to the service.
#[derive(Clone, Debug, Serialize, IpcCommand)]
#[ipc(name = "login", response = String)]
struct Login {
    /// The account.
    #[ipc(positional)]
    user: String,
    /// The session token.
    #[ipc(positional, secret)]
    token: Option<u64>,
    /// The API key.
    #[ipc(short = 'k', secret)]
    api_key: String,
    /// The PIN.
    #[ipc(secret, default = 4321)]
    pin: i32,
    /// Skip the certificate check.
    #[ipc(secret)]
    insecure: bool,
    /// The password, piped in.
    #[ipc(stdin, secret)]
    password: Option<String>,
    /// How many sessions.
    limit: Option<u32>,
}

impl Login {
    async fn handle(&mut self) -> String {
        format!(
            "{} {:?} {} {} {} {:?}",
            self.user, self.token, self.api_key, self.pin, self.insecure, self.password
        )
    }
}

fn login() -> Login {
    Login {
        user: String::new(),
        token: None,
        api_key: String::new(),
        pin: 0,
        insecure: false,
        password: None,
        limit: None,
    }
}

async fn call(argv: &[&str], stdin: Option<&[u8]>) -> Result<ArgvOutcome, IpcError> {
    IpcRouter::new()
        .register(login())
        .dispatch_argv("login", argv, stdin.map(<[u8]>::to_vec))
        .await
}

async fn usage(argv: &[&str]) -> String {
    match call(argv, None).await {
        Err(error @ IpcError::Usage { .. }) => error.to_string(),
        other => panic!("{argv:?}: expected a usage error, got {other:?}"),
    }
}

#[test]
fn the_schema_marks_each_secret_argument() {
    let schema: &ToolSchema = Login::SCHEMA.unwrap();
    let secret: Vec<(&str, bool)> = schema.params.iter().map(|p| (&*p.name, p.secret)).collect();
    assert_eq!(
        secret,
        [
            ("user", false),
            ("token", true),
            ("api_key", true),
            ("pin", true),
            ("insecure", true),
            ("password", true),
            ("limit", false),
        ]
    );
    assert_eq!(
        schema.param("pin").unwrap().default.as_deref(),
        Some("4321"),
        "the schema keeps the default; help does not show it"
    );
}

#[test]
fn the_manifest_round_trips_the_flag() {
    let schema = Login::SCHEMA.unwrap();
    let json = serde_json::to_value(schema).unwrap();
    let api_key = json["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "api_key")
        .unwrap();
    assert_eq!(api_key["secret"], serde_json::json!(true));
    let back: ToolSchema = serde_json::from_value(json).unwrap();
    assert_eq!(&back, schema);
}

#[tokio::test]
async fn help_marks_secrets_and_hides_their_defaults() {
    let Ok(ArgvOutcome::Help(help)) = call(&["--help"], None).await else {
        panic!("--help shows help");
    };
    for (flag, notes) in [
        ("<token>", "The session token. (secret)"),
        ("--api-key", "The API key. (secret) [required]"),
        ("--pin", "The PIN. (secret)"),
        ("--insecure", "Skip the certificate check. (secret)"),
        ("--password", "The password, piped in. (secret) [or piped"),
    ] {
        let line = help.lines().find(|l| l.contains(flag)).unwrap();
        assert!(line.contains(notes), "{flag}: {line}\n{help}");
    }
    assert!(!help.contains("4321"), "{help}");
    let limit = help.lines().find(|l| l.contains("--limit")).unwrap();
    assert!(!limit.contains("secret"), "{limit}");
}

#[tokio::test]
async fn a_secret_reaches_the_handler_as_given() {
    let Ok(ArgvOutcome::Response(bytes)) =
        call(&["ann", "77", "-k", "hunter2", "--insecure"], Some(b"pw")).await
    else {
        panic!("the call succeeds");
    };
    let reply: String = rmp_serde::from_slice(&bytes).unwrap();
    assert_eq!(reply, "ann Some(77) hunter2 4321 true Some(\"pw\")");
}

#[tokio::test]
async fn usage_errors_never_repeat_a_secret() {
    for (argv, value, argument) in [
        (
            &["ann", "-k", "k", "--pin", "hunter2"][..],
            "hunter2",
            "`--pin`",
        ),
        (&["ann", "s3cr3t", "-k", "k"], "s3cr3t", "`<token>`"),
        (
            &["ann", "--insecure=hunter2", "-k", "k"],
            "hunter2",
            "`--insecure`",
        ),
        (&["ann", "--api-kye=hunter2"], "hunter2", "`--api-kye`"),
        (&["ann", "--=hunter2"], "hunter2", "`--=`"),
    ] {
        let message = usage(argv).await;
        assert!(!message.contains(value), "{argv:?}: {message}");
        assert!(message.contains(argument), "{argv:?}: {message}");
    }
    let message = usage(&["ann", "-k", "k", "--pin", "hunter2"]).await;
    assert!(
        message.contains("invalid value for `--pin` (secret, not shown): expected a whole number"),
        "{message}"
    );
    let plain = usage(&["ann", "-k", "k", "--limit", "lots"]).await;
    assert!(
        plain.contains("invalid value `lots` for `--limit`"),
        "{plain}"
    );
}

#[tokio::test]
async fn typed_arguments_of_the_wrong_type_never_repeat_a_secret() {
    let router = IpcRouter::new().register(login());
    let params = rmp_serde::to_vec_named(&serde_json::json!({
        "user": "ann",
        "api_key": "k",
        "pin": "hunter2",
    }))
    .unwrap();
    let error = router.dispatch("login", &params).await.unwrap_err();
    assert!(matches!(error, IpcError::InvalidParams { .. }), "{error:?}");
    for shown in [error.to_string(), format!("{error:?}")] {
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(
            shown.contains("`pin`") && shown.contains("secret, not shown"),
            "{shown}"
        );
    }
    // A plain argument's message keeps the decoder's own words.
    let params = rmp_serde::to_vec_named(&serde_json::json!({
        "user": "ann",
        "api_key": "k",
        "limit": "lots",
    }))
    .unwrap();
    let plain = router.dispatch("login", &params).await.unwrap_err();
    let plain = plain.to_string();
    assert!(
        plain.contains("`limit`") && !plain.contains("secret"),
        "{plain}"
    );
}

#[tokio::test]
async fn debug_output_of_gangway_types_never_shows_a_secret() {
    let error = call(&["ann", "-k", "k", "--pin", "hunter2"], None)
        .await
        .unwrap_err();
    assert!(!format!("{error:?}").contains("hunter2"), "{error:?}");
    let request = gangway::ipc::protocol::Request {
        id: 1,
        method: "login".into(),
        params: None,
        argv: Some(vec!["ann".into(), "-k".into(), "hunter2".into()]),
        json: Some(r#"{"pin": "hunter2"}"#.into()),
        stdin: Some(serde_bytes::ByteBuf::from(b"hunter2".to_vec())),
        stdin_ready: false,
    };
    let shown = format!("{request:?}");
    assert!(!shown.contains("hunter2"), "{shown}");
    let chunk = gangway::ipc::protocol::ClientFrame::Input(gangway::ipc::protocol::InputChunk {
        id: 1,
        data: serde_bytes::ByteBuf::from(b"hunter2".to_vec()),
    });
    let chunk = format!("{chunk:?}");
    assert!(
        !chunk.contains("hunter2") && chunk.contains("<7 bytes>"),
        "{chunk}"
    );
    assert!(
        shown.contains("<3 words>") && shown.contains("<7 bytes>"),
        "{shown}"
    );
}
