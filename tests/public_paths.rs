//! The public paths people wrote against before the runtime's layout was
//! split into folders keep working: every name `gangway::ipc` exported,
//! the sandbox's names under both `gangway::ipc` and `gangway::sandbox`
//! (one type, two paths), and the renamed items under their old names
//! (deprecated, forwarding to the new ones).

#![allow(deprecated)]

use std::any::TypeId;

// Every public name of `gangway::ipc` before the split, by its old path.
#[allow(unused_imports)]
use gangway::ipc::{
    Access, ArgvOutcome, ArgvPlan, AsyncIpcClient, AuditLog, AuditOutcome, AuditRecord, AuditSink,
    Bwrap, BwrapError, CallCanceller, CallContext, CallEnded, CallEvent, CallGuard, CallInfo,
    CallStream, CancelReason, Cancelled, ClientError, CommandEnv, CommandError, CommandInfo,
    CommandResult, Decision, DecodeError, ENV_BIN, ENV_ENDPOINT, ENV_TOKEN, ENV_TOKEN_FILE,
    EncodeError, Endpoint, ErrorKind, InputStream, IpcClient, IpcCommand, IpcError, IpcRouter,
    IpcServer, IpcServerBuilder, PeerCredentials, REDACTED, RegisterError, RemoteError, Reply,
    SandboxEnv, SandboxPath, Scope, ScopeError, ShutdownReport, TryRegisterError, exit,
    locate_client_bin, protocol,
};

#[test]
fn the_sandbox_names_are_one_type_under_both_paths() {
    assert_eq!(
        TypeId::of::<gangway::sandbox::SandboxEnv>(),
        TypeId::of::<SandboxEnv>()
    );
    assert_eq!(
        TypeId::of::<dyn gangway::sandbox::CommandEnv>(),
        TypeId::of::<dyn CommandEnv>()
    );
    assert_eq!(
        TypeId::of::<gangway::sandbox::Bwrap>(),
        TypeId::of::<Bwrap>()
    );
    assert_eq!(
        TypeId::of::<gangway::sandbox::Access>(),
        TypeId::of::<Access>()
    );
    assert_eq!(gangway::sandbox::ENV_TOKEN, ENV_TOKEN);
    // Both paths name the function, with its signature.
    let _: [fn() -> Option<std::path::PathBuf>; 2] =
        [gangway::sandbox::locate_client_bin, locate_client_bin];
}

#[test]
fn the_wire_stream_is_the_handlers_stream() {
    // `ipc::protocol::OutputStream` is what a handler's writes travel as.
    let wire = rmp_serde::to_vec(&protocol::OutputStream::Stderr).unwrap();
    assert_eq!(rmp_serde::from_slice::<String>(&wire).unwrap(), "stderr");
}

#[test]
fn the_old_names_forward_to_the_new_ones() {
    assert_eq!(gangway::cli::EXIT_CODES, gangway::caller::EXIT_CODES);
    assert_eq!(gangway::cli::ENV_PROGRESS, gangway::caller::ENV_PROGRESS);
    // Not a call (it would look for a wrapper's arguments): the old path
    // names a function of the same signature.
    let _: fn(Vec<String>) -> Option<i32> = gangway::cli::run_if_call::<Vec<String>, String>;
    assert_eq!(
        TypeId::of::<gangway::controller::OutputStream>(),
        TypeId::of::<gangway::controller::OutputSource>()
    );
}

#[test]
fn a_timeout_reads_the_same_and_exits_124_on_every_path() {
    let error = IpcError::TimedOut {
        method: "stall".into(),
        after: std::time::Duration::from_millis(300),
    };
    assert_eq!(error.to_string(), "command `stall` timed out after 300ms");
    assert_eq!(error.exit_code(), exit::TIMEOUT);
    assert_eq!(error.kind(), ErrorKind::Timeout);
    assert_eq!(error.method(), "stall");
}
