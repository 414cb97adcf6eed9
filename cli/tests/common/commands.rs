//! The test host's commands: arguments of every kind (`echoargs`,
//! `search`), state kept across calls (`counter`), stdin (`cat`, `upper`,
//! `note`, `bytes`), failures, cancellation (`hang`, `linger`), long and
//! large calls (`sleep`, `repeat`), output shapes, secret arguments, and
//! handlers that keep their call's context for the test to read (`keep`,
//! and `by_hand`, an `IpcCommand` written without the derive); and the
//! `Waiter` the handlers that wait to be cancelled count through.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use gangway::ipc::{CallContext, CancelReason, CommandResult};
use gangway::{ArgEnum, IpcCommand};
use serde::{Deserialize, Serialize};

/// Every word it was given, back as JSON.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "echoargs", response = Vec<String>)]
pub struct EchoArgs {
    #[ipc(positional)]
    pub words: Vec<String>,
}

impl EchoArgs {
    async fn handle(&mut self) -> Vec<String> {
        std::mem::take(&mut self.words)
    }
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, ArgEnum)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Newest,
    Oldest,
}

/// Search the notes.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "search", response = serde_json::Value)]
pub struct Search {
    /// What to find.
    #[ipc(positional)]
    pub query: String,
    /// How many.
    #[ipc(short = 'n', default = 10)]
    pub limit: u32,
    /// Say more.
    #[ipc(short = 'v')]
    pub verbose: bool,
    /// Labels.
    #[ipc(short = 't')]
    pub tag: Vec<String>,
    /// Weight.
    pub ratio: Option<f64>,
    /// Order.
    #[ipc(default = Order::Newest, default_text = "newest")]
    pub order: Order,
}

impl Search {
    async fn handle(&mut self) -> serde_json::Value {
        serde_json::json!({
            "query": self.query, "limit": self.limit, "verbose": self.verbose,
            "tag": self.tag, "ratio": self.ratio, "order": self.order,
        })
    }
}

/// Count calls; state kept across calls.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "counter", response = u64)]
pub struct Counter {
    #[ipc(state)]
    #[serde(skip)]
    pub total: Arc<AtomicU64>,
}

impl Counter {
    async fn handle(&mut self) -> u64 {
        self.total.fetch_add(1, Ordering::SeqCst) + 1
    }
}

/// Give the piped bytes back, raw.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "cat", response = serde_bytes::ByteBuf)]
pub struct Cat {
    /// The bytes.
    #[ipc(stdin)]
    pub data: Vec<u8>,
}

impl Cat {
    async fn handle(&mut self) -> serde_bytes::ByteBuf {
        serde_bytes::ByteBuf::from(std::mem::take(&mut self.data))
    }
}

/// Upper-case the piped text.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "upper", response = String)]
pub struct Upper {
    /// The text.
    #[ipc(stdin)]
    pub text: String,
}

impl Upper {
    async fn handle(&mut self) -> String {
        self.text.to_uppercase()
    }
}

/// Fail on purpose.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "fail", response = CommandResult<String>)]
pub struct Fail {
    #[ipc(positional)]
    pub why: String,
}

impl Fail {
    async fn handle(&mut self) -> CommandResult<String> {
        Err(gangway::ipc::CommandError::new(format!(
            "failed: {}",
            self.why
        )))
    }
}

/// Take no input at all.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "ping", response = String)]
pub struct Ping {}

impl Ping {
    async fn handle(&mut self) -> String {
        "pong\n".to_owned()
    }
}

/// What a handler that waits for its call's cancellation (`hang`,
/// `linger`, `keep`) counts for the test: calls begun, and handlers
/// dropped before they finished.
#[derive(Clone, Default)]
pub struct Waiter {
    /// Calls begun.
    pub started: Arc<AtomicU64>,
    /// Handlers dropped before they finished.
    pub abandoned: Arc<AtomicU64>,
}

/// Counts a handler dropped before it finished.
struct Unfinished(Option<Arc<AtomicU64>>);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some(count) = self.0.take() {
            count.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Waiter {
    /// Counts the call begun, waits until it is cancelled (or, `stubborn`,
    /// an hour first, to be dropped after the grace, counted in
    /// `abandoned`), and gives the reason.
    async fn wait(&self, ctx: &CallContext, stubborn: bool) -> Option<CancelReason> {
        self.started.fetch_add(1, Ordering::SeqCst);
        let mut unfinished = Unfinished(Some(self.abandoned.clone()));
        if stubborn {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        }
        ctx.cancelled().await;
        unfinished.0 = None;
        ctx.cancel_reason()
    }
}

/// Wait until the call is cancelled (it times out after 300 ms), and count
/// the cancellations seen, by reason.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "hang", response = String, timeout = "300ms")]
pub struct Hang {
    /// Ignore the cancellation: keep going past the cancel grace.
    pub stubborn: bool,
    #[ipc(context)]
    #[serde(skip)]
    pub ctx: CallContext,
    #[ipc(state)]
    #[serde(skip)]
    pub waiter: Waiter,
    /// Cancellations the handler saw because the call timed out.
    #[ipc(state)]
    #[serde(skip)]
    pub timed_out: Arc<AtomicU64>,
}

impl Hang {
    async fn handle(&mut self) -> String {
        if self.waiter.wait(&self.ctx, self.stubborn).await == Some(CancelReason::TimedOut) {
            self.timed_out.fetch_add(1, Ordering::SeqCst);
        }
        "cancelled".to_owned()
    }
}

/// Wait, with no timeout of its own, until the call is cancelled; count
/// the cancellations seen because the caller went away.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "linger", response = String)]
pub struct Wait {
    #[ipc(context)]
    #[serde(skip)]
    pub ctx: CallContext,
    #[ipc(state)]
    #[serde(skip)]
    pub waiter: Waiter,
    /// Cancellations seen because the caller left.
    #[ipc(state)]
    #[serde(skip)]
    pub caller_gone: Arc<AtomicU64>,
    /// Cancellations seen because the caller was interrupted (a signal).
    #[ipc(state)]
    #[serde(skip)]
    pub interrupted: Arc<AtomicU64>,
    /// Ignore the cancellation: keep going past the cancel grace.
    pub stubborn: bool,
    /// Cancellations seen because the host revoked the caller's scope.
    #[ipc(state)]
    #[serde(skip)]
    pub revoked: Arc<AtomicU64>,
    /// Cancellations seen because the caller's scope expired.
    #[ipc(state)]
    #[serde(skip)]
    pub expired: Arc<AtomicU64>,
}

impl Wait {
    async fn handle(&mut self) -> String {
        let seen = match self.waiter.wait(&self.ctx, self.stubborn).await {
            Some(CancelReason::CallerGone) => Some(&self.caller_gone),
            Some(CancelReason::Interrupted) => Some(&self.interrupted),
            Some(CancelReason::Revoked) => Some(&self.revoked),
            Some(CancelReason::Expired) => Some(&self.expired),
            _ => None,
        };
        if let Some(count) = seen {
            count.fetch_add(1, Ordering::SeqCst);
        }
        "cancelled".to_owned()
    }
}

/// Take a while.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "sleep", response = u64)]
pub struct Sleep {
    /// Milliseconds.
    #[ipc(positional)]
    pub ms: u64,
    /// Sleeps begun.
    #[ipc(state)]
    #[serde(skip)]
    pub started: Arc<AtomicU64>,
    /// Sleeps that ran to the end (a cancelled one never counts).
    #[ipc(state)]
    #[serde(skip)]
    pub finished: Arc<AtomicU64>,
}

impl Sleep {
    pub fn params(ms: u64) -> Vec<u8> {
        rmp_serde::to_vec_named(&Sleep {
            ms,
            started: Arc::default(),
            finished: Arc::default(),
        })
        .unwrap()
    }

    async fn handle(&mut self) -> u64 {
        self.started.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(std::time::Duration::from_millis(self.ms)).await;
        self.finished.fetch_add(1, Ordering::SeqCst);
        self.ms
    }
}

/// Repeat a word: a small call with a large answer.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "repeat", response = String)]
pub struct Repeat {
    /// The word.
    #[ipc(positional)]
    pub word: String,
    /// How many times.
    #[ipc(positional)]
    pub times: u32,
}

impl Repeat {
    async fn handle(&mut self) -> String {
        self.word.repeat(self.times as usize)
    }
}

/// Greet someone: text without a final newline.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "greet", response = String)]
pub struct Greet {
    /// Who.
    #[ipc(positional)]
    pub name: String,
}

impl Greet {
    async fn handle(&mut self) -> String {
        format!("hello {}", self.name)
    }
}

/// Say what note was given: an optional stdin argument.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "note", response = String)]
pub struct Note {
    /// The note.
    #[ipc(stdin)]
    pub note: Option<String>,
}

impl Note {
    async fn handle(&mut self) -> String {
        match &self.note {
            None => "no note".to_owned(),
            Some(note) => {
                let start: String = note.chars().take(8).collect();
                format!("a note of {} bytes: {start:?}", note.len())
            }
        }
    }
}

/// Give the piped bytes back as a `Vec<u8>` response.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "bytes", response = Vec<u8>)]
pub struct Bytes {
    /// The bytes.
    #[ipc(stdin)]
    pub data: Vec<u8>,
}

impl Bytes {
    async fn handle(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.data)
    }
}

/// A structured response whose fields are not in alphabetical order.
#[derive(Debug, Serialize, Deserialize)]
pub struct Report {
    pub zebra: u32,
    pub apple: String,
    pub middle: Vec<bool>,
}

/// Report something, fields in declaration order.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "report", response = Report)]
pub struct ReportCommand {}

impl ReportCommand {
    async fn handle(&mut self) -> Report {
        Report {
            zebra: 26,
            apple: "a".to_owned(),
            middle: vec![true, false],
        }
    }
}

/// Log in with a key (a command with secret arguments).
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "login", response = String)]
pub struct Login {
    /// Who logs in.
    #[ipc(positional)]
    pub user: String,
    /// The API key.
    #[ipc(secret)]
    pub key: String,
    /// A PIN, when the account has one.
    #[ipc(secret)]
    pub pin: Option<u32>,
}

impl Login {
    async fn handle(&mut self) -> String {
        format!("welcome, {}", self.user)
    }
}

/// Call contexts a handler kept, for the test to read how (and whether)
/// each call was cancelled, after the handler is gone too.
#[derive(Clone, Default)]
pub struct Kept(Arc<Mutex<Vec<CallContext>>>);

impl Kept {
    /// How many contexts were kept: how many calls began.
    pub fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    /// The `index`th context kept.
    pub fn get(&self, index: usize) -> CallContext {
        self.0.lock().unwrap()[index].clone()
    }

    /// Why the `index`th call was cancelled, if it was.
    pub fn reason(&self, index: usize) -> Option<CancelReason> {
        self.get(index).cancel_reason()
    }

    fn push(&self, context: CallContext) {
        self.0.lock().unwrap().push(context);
    }
}

/// What a [`Hook`] runs.
type HookFn = Arc<dyn Fn() + Send + Sync>;

/// Something a test runs in a handler as it begins (nothing until set).
#[derive(Clone, Default)]
pub struct Hook(Arc<Mutex<Option<HookFn>>>);

impl Hook {
    /// Runs `hook` in each handler from now on.
    pub fn set(&self, hook: impl Fn() + Send + Sync + 'static) {
        *self.0.lock().unwrap() = Some(Arc::new(hook));
    }

    fn run(&self) {
        let hook = self.0.lock().unwrap().clone();
        if let Some(hook) = hook {
            hook();
        }
    }
}

/// Keep a clone of the call's context, run the test's hook, and wait
/// until the call is cancelled (`stubborn`: an hour first, ignoring it).
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "keep", response = String)]
pub struct Keep {
    /// Ignore the cancellation: keep going past the cancel grace.
    pub stubborn: bool,
    #[ipc(context)]
    #[serde(skip)]
    pub ctx: CallContext,
    #[ipc(state)]
    #[serde(skip)]
    pub kept: Kept,
    #[ipc(state)]
    #[serde(skip)]
    pub hook: Hook,
    #[ipc(state)]
    #[serde(skip)]
    pub waiter: Waiter,
}

impl Keep {
    async fn handle(&mut self) -> String {
        self.kept.push(self.ctx.clone());
        self.hook.run();
        let reason = self.waiter.wait(&self.ctx, self.stubborn).await;
        format!("{reason:?}")
    }
}

/// `keep` without the derive: an `IpcCommand` written by hand, which finds
/// its context with `CallContext::current()`.
#[derive(Clone, Serialize)]
pub struct ByHand {
    #[serde(skip)]
    pub kept: Kept,
}

impl gangway::ipc::IpcCommand for ByHand {
    type Response = String;

    fn name(&self) -> String {
        "by_hand".to_owned()
    }

    fn apply_args(&mut self, params: &[u8]) -> Result<(), rmp_serde::decode::Error> {
        // No arguments: whatever came (an empty map, or nothing) is ignored.
        if !params.is_empty() {
            rmp_serde::from_slice::<serde::de::IgnoredAny>(params)?;
        }
        Ok(())
    }

    async fn handle(&mut self) -> String {
        let ctx = CallContext::current();
        self.kept.push(ctx.clone());
        ctx.cancelled().await;
        format!("{:?}", ctx.cancel_reason())
    }
}
