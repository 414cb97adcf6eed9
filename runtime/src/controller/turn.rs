//! Turns of an agent: whether one is in progress, how many there were, and
//! what started the current one.

use tokio::sync::watch;

/// What started an agent's turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TurnProvenance {
    /// A person, through the controller's input.
    User,
    /// The host program itself.
    Host,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct TurnState {
    active: bool,
    /// The number of the turn in progress (or the last).
    current: u64,
    started: u64,
    completed: u64,
    provenance: Option<TurnProvenance>,
    last_stop_reason: Option<String>,
}

/// Tracks an agent's turns.
#[derive(Debug)]
pub struct TurnActivityTracker {
    state: watch::Sender<TurnState>,
}

impl Default for TurnActivityTracker {
    fn default() -> Self {
        TurnActivityTracker {
            state: watch::Sender::new(TurnState::default()),
        }
    }
}

impl TurnActivityTracker {
    /// A tracker with no turns.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks a turn begun; returns its number, for [`end`](Self::end).
    pub fn begin(&self, provenance: TurnProvenance) -> u64 {
        let mut turn = 0;
        self.state.send_modify(|state| {
            state.active = true;
            state.started += 1;
            state.current = state.started;
            state.provenance = Some(provenance);
            turn = state.current;
        });
        turn
    }

    /// Marks turn `turn` ended, with the agent's stop reason if it gave
    /// one. A turn that is no longer the current one (a process replaced
    /// mid-turn) is counted without touching the current one.
    pub fn end(&self, turn: u64, stop_reason: Option<String>) {
        self.state.send_modify(|state| {
            state.completed += 1;
            if state.current == turn {
                state.active = false;
                state.last_stop_reason = stop_reason;
            }
        });
    }

    /// Whether a turn is in progress.
    pub fn is_active(&self) -> bool {
        self.state.borrow().active
    }

    /// The number of the turn in progress (or the last one), counting
    /// from 1; 0 before the first.
    pub fn current_turn(&self) -> u64 {
        self.state.borrow().current
    }

    /// How many turns began.
    pub fn turns_started(&self) -> u64 {
        self.state.borrow().started
    }

    /// How many turns ended.
    pub fn turns_completed(&self) -> u64 {
        self.state.borrow().completed
    }

    /// What started the current (or last) turn.
    pub fn provenance(&self) -> Option<TurnProvenance> {
        self.state.borrow().provenance
    }

    /// The stop reason of the last turn that ended.
    pub fn last_stop_reason(&self) -> Option<String> {
        self.state.borrow().last_stop_reason.clone()
    }

    /// Waits until at least `turns` turns have ended.
    pub async fn wait_completed(&self, turns: u64) {
        let mut state = self.state.subscribe();
        let _ = state.wait_for(|s| s.completed >= turns).await;
    }

    /// Waits until every turn begun so far has ended.
    pub async fn wait_idle(&self) {
        let mut state = self.state.subscribe();
        let begun = state.borrow().started;
        let _ = state.wait_for(|s| s.completed >= begun).await;
    }
}
